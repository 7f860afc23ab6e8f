/**
 * One writer per session, with real processes (ADR 0017): while `bridle run`
 * writes a session, a second `run --session`, `resume` (even one that only
 * repairs) is refused with exit 2 and one line naming the holder, and the
 * log is left as it was; readers need no lock. A holder killed outright
 * leaves its lock behind; the next writer takes it over, logs it, and the
 * log still verifies and replays byte for byte.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { isProcessAlive } from '../../adapters/store/jsonl-lock.js';
import { verifyFile } from '../../cli/verify-log.js';
import { parseLog } from '../../log/parse.js';
import { replayThroughMachines } from '../../replay/replay.js';
import { builtinTools } from '../../tools/index.js';
import { describeWithSystemDep, SYSTEM_DEPS } from '../helpers/system-deps.js';
import { CLI, cliBuilt, createWorld, logHas, waitFor } from './cli-world.js';

/** The tool runs until the test creates `go` in the workspace (at most 20 s). */
const SLOW = {
  label: 'scripted: slow work',
  responses: [{ text: 'working', toolCalls: [{ name: 'bash', arguments: { command: 'echo ran >> marker; for i in $(seq 400); do [ -f go ] && break; sleep 0.05; done' } }] }, { text: 'finished' }],
};
const common = (ws: string) => ['--cwd', ws, '--approval', 'auto', '--sandbox', 'off'];
const lines = (s: string) => s.split('\n').filter(Boolean);

describe.skipIf(!cliBuilt).concurrent('one writer per session (real processes)', () => {
  it('a second writer is refused naming the first; the log is untouched; readers need no lock', async () => {
    const w = createWorld();
    try {
      const first = w.spawn(['run', 'do the work', '--model', `scripted:${w.script('slow.json', SLOW)}`, ...common(w.workspace)]);
      await waitFor(() => logHas(w.log(), 'tool/dispatch') || first.proc.exitCode !== null, 15_000, 'the first writer to dispatch');
      const log = w.logPath()!;
      const before = w.log();
      const again = w.script('again.json', { responses: [{ text: 'second writer' }] });
      const holder = new RegExp(`^bridle: SESSION_LOCKED: session is being written by pid ${first.proc.pid} on ${hostname()} \\(since [^)]+\\); lock: ${log.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.lock$`);

      for (const args of [
        ['run', '--session', log, 'more', '--model', `scripted:${again}`, ...common(w.workspace)],
        ['resume', log, '--continue', '--model', `scripted:${again}`, ...common(w.workspace)],
        // Repair alone appends too: it is a writer.
        ['resume', log],
      ]) {
        const second = w.spawn(args);
        const r = await second.exit;
        expect(r.code, second.stderr()).toBe(2);
        expect(lines(second.stderr())).toHaveLength(1);
        expect(second.stderr().trim()).toMatch(holder);
      }
      expect(w.log().startsWith(before)).toBe(true);
      expect(parseLog(w.log()).entries.some((e) => e.kind === 'repair' || e.kind === 'session/takeover')).toBe(false);

      // A reader takes no lock: replay reads the live log (its only complaint is the turn still running).
      const reader = w.spawn(['replay', log, '--json']);
      expect((await reader.exit).code).toBe(2);
      expect(reader.stderr()).not.toContain('SESSION_LOCKED');
      expect(JSON.parse(fs.readFileSync(`${log}.lock`, 'utf8'))).toMatchObject({ pid: first.proc.pid, host: hostname() });

      fs.writeFileSync(`${w.workspace}/go`, '');
      expect((await first.exit).code, first.stderr()).toBe(0);
      // Released on exit.
      expect(fs.existsSync(`${log}.lock`)).toBe(false);
      expect(w.marker()).toEqual(['ran']);
      expect(verifyFile(log).verdict.violations).toEqual([]);
    } finally {
      w.cleanup();
    }
  });

  it("a SIGKILLed holder's lock is taken over by the next writer, logged, and the log replays", async () => {
    const w = createWorld();
    try {
      const first = w.spawn(['run', 'do the work', '--model', `scripted:${w.script('slow.json', SLOW)}`, ...common(w.workspace)]);
      await waitFor(() => logHas(w.log(), 'tool/dispatch') || first.proc.exitCode !== null, 15_000, 'the first writer to dispatch');
      const log = w.logPath()!;
      first.proc.kill('SIGKILL');
      await first.exit;
      fs.writeFileSync(`${w.workspace}/go`, '');
      // Killed outright: the lock stays, naming a pid that is gone.
      expect(JSON.parse(fs.readFileSync(`${log}.lock`, 'utf8'))).toMatchObject({ pid: first.proc.pid });

      const next = w.spawn(['resume', log, '--continue', '--model', `scripted:${w.script('resume.json', { responses: [{ text: 'checked; carrying on' }] })}`, ...common(w.workspace)]);
      const r = await next.exit;
      expect(r.code, next.stderr()).toBe(0);
      expect(next.stderr()).toContain(`took over: pid ${first.proc.pid} on ${hostname()}`);
      expect(fs.existsSync(`${log}.lock`)).toBe(false);

      const entries = parseLog(w.log()).entries;
      const takeover = entries.findIndex((e) => e.kind === 'session/takeover');
      expect(entries[takeover]).toMatchObject({ ignorable: true, stale: { pid: first.proc.pid, host: hostname() }, by: { pid: next.proc.pid, host: hostname() } });
      // Said before the repair of what the gone writer left open.
      expect(entries[takeover + 1]).toMatchObject({ kind: 'repair', found: 'open-turn' });
      expect(verifyFile(log).verdict.violations).toEqual([]);
      const replayed = await replayThroughMachines(entries, builtinTools());
      expect(replayed.identical, replayed.note).toBe(true);
      const check = w.spawn(['replay', log]);
      expect((await check.exit).code, check.stderr()).toBe(0);
    } finally {
      w.cleanup();
    }
  });
});

describeWithSystemDep('one writer across PID namespaces (ADR 0040)', SYSTEM_DEPS.unshare, (unshare) => {
  it.skipIf(!cliBuilt)('a live writer in another PID namespace, whose pid this one cannot see, keeps its lock: a second writer is refused and the log untouched', async () => {
    const w = createWorld();
    try {
      // The first writer runs in a PID namespace of its own, after enough processes there that its pid is one no process has out here.
      const script = w.script('slow.json', SLOW);
      // The namespace's pids count up from 1 (the shell): pick one that is free out here, and use up the ones before it.
      let target = 300;
      while (isProcessAlive(target)) target++;
      const inner = `i=2; while [ $i -lt ${target} ]; do /bin/true; i=$((i+1)); done; "$@"`;
      const args = [...(process.getuid?.() === 0 ? [] : ['--user', '--map-root-user']), '--pid', '--fork', 'sh', '-c', inner, 'sh', process.execPath, CLI, 'run', 'do the work', '--model', `scripted:${script}`, ...common(w.workspace)];
      const first = spawn(unshare, args, { cwd: w.root, env: { ...process.env, BRIDLE_HOME: w.home, BRIDLE_MODEL: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
      let firstErr = '';
      first.stderr!.on('data', (d: Buffer) => (firstErr += d.toString()));
      const firstExit = new Promise<number | null>((resolve) => first.once('exit', (code) => resolve(code)));
      await waitFor(() => logHas(w.log(), 'tool/dispatch') || first.exitCode !== null, 20_000, 'the namespaced writer to dispatch');
      expect(first.exitCode, firstErr).toBe(null);
      const log = w.logPath()!;
      const claim = JSON.parse(fs.readFileSync(`${log}.lock`, 'utf8')) as { pid: number; host: string };
      // What made the old rule take the lock: the holder's pid is on this host's name, and no process here has it.
      expect(claim.host).toBe(hostname());
      expect(isProcessAlive(claim.pid)).toBe(false);
      const before = w.log();

      const second = w.spawn(['resume', log]);
      const r = await second.exit;
      expect(r.code, second.stderr()).toBe(2);
      expect(second.stderr().trim()).toMatch(new RegExp(`^bridle: SESSION_LOCKED: session is being written by pid ${claim.pid} on `));
      expect(w.log().startsWith(before)).toBe(true);
      expect(parseLog(w.log()).entries.some((e) => e.kind === 'repair' || e.kind === 'session/takeover')).toBe(false);

      fs.writeFileSync(`${w.workspace}/go`, '');
      expect(await firstExit, firstErr).toBe(0);
      expect(fs.existsSync(`${log}.lock`)).toBe(false);
      expect(w.marker()).toEqual(['ran']);
      expect(verifyFile(log).verdict.violations).toEqual([]);
    } finally {
      w.cleanup();
    }
  }, 60_000);
});
