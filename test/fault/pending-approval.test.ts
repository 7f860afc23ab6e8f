/**
 * Fault injection, pending approvals (ADR 0027): a real `bridle run` on a terminal (through `script`) asks to run
 * a bash call that appends a marker line; while the question is open the process is killed with SIGKILL. `bridle
 * resume` then asks the same question again on its terminal; answered yes, the call runs exactly once (one marker
 * line), answered no or with no terminal to ask, it never runs. Each log verifies and replays through the machines.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { verifyFile } from '../../cli/verify-log.js';
import type { Entry, EntryOf } from '../../log/entries.js';
import { parseLog } from '../../log/parse.js';
import { CLI, cliBuilt, createWorld, logHas, waitFor, type World } from './cli-world.js';

const WORK = { label: 'scripted: asks to mark', responses: [{ text: 'marking', toolCalls: [{ name: 'bash', arguments: { command: 'echo ran >> marker' } }] }, { text: 'marked' }] };
const AFTER = { label: 'scripted: after the resume', responses: [{ text: 'done after the resume' }] };
const QUESTION = '[y]es / [n]o';
const quote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;

/** The CLI on a real terminal (`script`), so the terminal answerer asks; `answer` is typed once the question shows. */
function onTerminal(w: World, args: string[], answer?: string) {
  const cmd = [process.execPath, CLI, ...args].map(quote).join(' ');
  const child = spawn('script', ['-qec', cmd, '/dev/null'], { cwd: w.root, env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: 'dumb', BRIDLE_HOME: w.home }, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let asked = 0;
  const onData = (d: Buffer) => {
    out += d.toString();
    const n = out.split(QUESTION).length - 1;
    if (n > asked) {
      asked = n;
      if (answer !== undefined) child.stdin.write(`${answer}\n`);
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exit = new Promise<number | null>((resolve) => child.on('close', resolve));
  return { child, out: () => out, asked: () => asked, exit };
}

/** Starts the run, waits until its question is open and logged, and kills the bridle process (not `script`) with SIGKILL. */
async function killedWhileAsking(w: World): Promise<string> {
  const run = onTerminal(w, ['run', 'mark it', '--model', `scripted:${w.script('work.json', WORK)}`, '--cwd', w.workspace, '--approval', 'ask', '--sandbox', 'off']);
  await waitFor(() => (logHas(w.log(), 'approval/asked') && run.asked() > 0) || run.child.exitCode !== null, 15_000, 'the approval question');
  const logPath = w.logPath()!;
  const holder = JSON.parse(fs.readFileSync(`${logPath}.lock`, 'utf8')) as { pid: number };
  process.kill(holder.pid, 'SIGKILL');
  await run.exit;
  expect(w.marker()).toEqual([]);
  return logPath;
}

const kinds = (es: Entry[], kind: Entry['kind']) => es.filter((e) => e.kind === kind);

async function expectVerifiesAndReplays(logPath: string): Promise<void> {
  expect(verifyFile(logPath).verdict.violations).toEqual([]);
  const r = spawn(process.execPath, [CLI, 'replay', logPath, '--machines'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  r.stdout.on('data', (d: Buffer) => (out += d));
  r.stderr.on('data', (d: Buffer) => (out += d));
  const code = await new Promise<number | null>((resolve) => r.on('close', resolve));
  expect(code, out).toBe(0);
}

describe.skipIf(!cliBuilt).concurrent('an approval pending at a SIGKILL (ADR 0027)', () => {
  it('an approval pending at a kill is asked again after restart and the call runs once on approval', async () => {
    const w = createWorld();
    try {
      const logPath = await killedWhileAsking(w);
      const resumed = onTerminal(w, ['resume', logPath, '--model', `scripted:${w.script('after.json', AFTER)}`], 'y');
      const code = await resumed.exit;
      expect(code, resumed.out()).toBe(0);
      expect(resumed.out()).toMatch(/pending: a call waiting on an approval when the session stopped \(t1\.s1\.c1\), asked again now; nothing of it ran/);
      expect(resumed.out()).toContain('? bash: echo ran >> marker');
      expect(w.marker()).toEqual(['ran']);
      const es = parseLog(w.log()).entries;
      expect(kinds(es, 'approval/asked')).toHaveLength(2);
      expect(kinds(es, 'approval/decided')).toEqual([expect.objectContaining({ callId: 't1.s1.c1', outcome: 'allowed-once', by: 'terminal' })]);
      expect(kinds(es, 'tool/dispatch')).toHaveLength(1);
      expect((kinds(es, 'tool/result') as EntryOf<'tool/result'>[]).map((r) => [r.callId, r.status])).toEqual([['t1.s1.c1', 'ok']]);
      // One turn, gone on with: no repair closed it, and it ended once, completed.
      expect(kinds(es, 'repair')).toEqual([]);
      expect(kinds(es, 'turn/start')).toHaveLength(1);
      expect(kinds(es, 'turn/end')).toEqual([expect.objectContaining({ turn: 't1', reason: 'completed' })]);
      await expectVerifiesAndReplays(logPath);
    } finally {
      w.cleanup();
    }
  });

  it('answered no after the restart, the call never runs', async () => {
    const w = createWorld();
    try {
      const logPath = await killedWhileAsking(w);
      const resumed = onTerminal(w, ['resume', logPath, '--model', `scripted:${w.script('after.json', AFTER)}`], 'n');
      expect(await resumed.exit, resumed.out()).toBe(0);
      expect(w.marker()).toEqual([]);
      const es = parseLog(w.log()).entries;
      expect(kinds(es, 'approval/decided')).toEqual([expect.objectContaining({ outcome: 'rejected', by: 'terminal' })]);
      expect(kinds(es, 'tool/dispatch')).toEqual([]);
      await expectVerifiesAndReplays(logPath);
    } finally {
      w.cleanup();
    }
  });

  it('resumed with no terminal to ask, the call is denied (unavailable) and never runs', async () => {
    const w = createWorld();
    try {
      const logPath = await killedWhileAsking(w);
      const resumed = w.spawn(['resume', logPath, '--model', `scripted:${w.script('after.json', AFTER)}`]);
      const r = await resumed.exit;
      expect(r.code, resumed.stderr()).toBe(0);
      expect(w.marker()).toEqual([]);
      const es = parseLog(w.log()).entries;
      expect(kinds(es, 'approval/decided')).toEqual([expect.objectContaining({ outcome: 'unavailable' })]);
      expect(kinds(es, 'tool/dispatch')).toEqual([]);
      await expectVerifiesAndReplays(logPath);
    } finally {
      w.cleanup();
    }
  });
});
