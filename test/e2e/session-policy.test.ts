/**
 * What a session was started with, it keeps (ADR 0027), through the built CLI: `resume` and `run --session`
 * run under the logged policy, not the config file's; a flag that widens it is refused with exit 2 and one line,
 * unless `--override-policy` is given, which is logged; a narrowing is logged and runs.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Entry, EntryOf } from '../../log/entries.js';
import { readSessionLog, tempWorld, type CliWorld } from '../helpers/cli-world.js';
import { runCli } from '../helpers/cli.js';
import { cliBuilt } from '../fault/cli-world.js';

let w: CliWorld;
beforeEach(() => {
  w = tempWorld('bridle-e2e-policy-');
});
afterEach(() => rmSync(w.root, { recursive: true, force: true }));

/** A model that runs one bash writing a marker line, then says done. */
const marking = (label: string) => {
  const file = join(w.root, `${label}.json`);
  writeFileSync(file, JSON.stringify({ label: `scripted: ${label}`, responses: [{ toolCalls: [{ name: 'bash', arguments: { command: `echo ${label} >> marker` } }] }, { text: 'done' }] }));
  return `scripted:${file}`;
};
const env = () => ({ BRIDLE_HOME: w.home });
const sessionId = () => (readSessionLog(w.home)[0] as EntryOf<'session/start'>).id;
const logText = () => readFileSync(join(w.home, 'sessions', `${sessionId()}.jsonl`), 'utf8');
const results = (log: Entry[]) => log.filter((e): e is EntryOf<'tool/result'> => e.kind === 'tool/result').map((r) => r.status);
const marks = () => {
  try {
    return readFileSync(join(w.ws, 'marker'), 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
};

describe.skipIf(!cliBuilt)('a session keeps its policy across processes (ADR 0027)', () => {
  it('`resume --approval auto` on a `never` session is refused', async () => {
    const first = await runCli(['run', 'one', '--model', marking('one'), '--cwd', w.ws, '--approval', 'never', '--sandbox', 'off'], { env: env() });
    expect(first.code, first.stderr).toBe(0);
    expect(readSessionLog(w.home)[0]).toMatchObject({ kind: 'session/start', policy: { approval: 'never', sandbox: 'off', mode: 'full', network: true, allow: [] } });
    const before = logText();
    const r = await runCli(['resume', sessionId(), 'two', '--model', marking('two'), '--approval', 'auto'], { env: env() });
    expect(r.code).toBe(2);
    const refusal = r.stderr.split('\n').filter((l) => l.startsWith('bridle:'));
    expect(refusal).toEqual([`bridle: session ${sessionId()} was started with approval never, sandbox off, network; approval never → auto would widen it (pass --override-policy to allow it)`]);
    // Refused before anything was written: the log is as the first run left it, and nothing ran.
    expect(logText()).toBe(before);
    expect(marks()).toEqual([]);
    // The same through `run --session`.
    const again = await runCli(['run', 'two', '--session', sessionId(), '--model', marking('two'), '--approval', 'auto'], { env: env() });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/approval never → auto would widen it/);
    expect(logText()).toBe(before);
  });

  it('with --override-policy the widening is logged before the turn, and the call runs unasked', async () => {
    await runCli(['run', 'one', '--model', marking('one'), '--cwd', w.ws, '--approval', 'never', '--sandbox', 'off'], { env: env() });
    const r = await runCli(['resume', sessionId(), 'two', '--model', marking('two'), '--approval', 'auto', '--override-policy'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    const log = readSessionLog(w.home);
    const at = log.findIndex((e) => e.kind === 'session/policy');
    expect(log[at]).toMatchObject({ by: 'override-policy', from: { approval: 'never' }, to: { approval: 'auto' } });
    expect(log[at - 1]!.kind).toBe('session/reopen');
    expect(log.findIndex((e, i) => i > at && e.kind === 'turn/start')).toBeGreaterThan(at);
    expect(results(log)).toEqual(['denied', 'ok']);
    expect(marks()).toEqual(['two']);
  });

  it('without a flag the logged policy wins over the config file; a narrowing flag is logged and runs', async () => {
    await runCli(['run', 'one', '--model', marking('one'), '--cwd', w.ws, '--approval', 'never', '--sandbox', 'off'], { env: env() });
    writeFileSync(join(w.home, 'config.yaml'), 'approval: auto\n');
    const kept = await runCli(['run', 'two', '--session', sessionId(), '--cwd', w.ws, '--model', marking('two')], { env: env() });
    expect(kept.code, kept.stderr).toBe(0);
    expect(kept.stderr).toMatch(/approval: never/);
    expect(marks()).toEqual([]);
    const narrowed = await runCli(['run', 'three', '--session', sessionId(), '--cwd', w.ws, '--model', marking('three'), '--sandbox', 'bwrap', '--sandbox-mode', 'read-only', '--no-allow-network'], { env: env() });
    expect(narrowed.code, narrowed.stderr).toBe(0);
    const change = readSessionLog(w.home).filter((e) => e.kind === 'session/policy');
    expect(change).toEqual([expect.objectContaining({ by: 'flags', from: expect.objectContaining({ sandbox: 'off' }), to: expect.objectContaining({ sandbox: 'bwrap', mode: 'read-only', network: false }) })]);
    // Under never, bash with the sandbox off is refused (SANDBOX_OFF); narrowed to bwrap read-only it runs, confined,
    // and its write fails inside the sandbox (ADR 0052).
    expect(results(readSessionLog(w.home))).toEqual(['denied', 'denied', 'error']);
    expect(marks()).toEqual([]);
    const replay = await runCli(['replay', sessionId(), '--machines'], { env: env() });
    expect(replay.code, replay.stdout + replay.stderr).toBe(0);
  });
});

describe.skipIf(!cliBuilt)('a continued session runs in its logged workspace (ADR 0041)', () => {
  const marksIn = (dir: string) => (existsSync(join(dir, 'marker')) ? readFileSync(join(dir, 'marker'), 'utf8').split('\n').filter(Boolean) : []);
  let other: string;
  let shell: string;
  beforeEach(() => {
    other = join(w.root, 'other');
    shell = join(w.root, 'shell');
    mkdirSync(other);
    mkdirSync(shell);
  });

  it('`run --session` without --cwd runs in the logged workspace, not the shell\'s directory', async () => {
    const first = await runCli(['run', 'one', '--model', marking('one'), '--cwd', w.ws, '--approval', 'auto', '--sandbox', 'off'], { env: env() });
    expect(first.code, first.stderr).toBe(0);
    const r = await runCli(['run', 'two', '--session', sessionId(), '--model', marking('two')], { env: env(), cwd: shell });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`workspace: ${w.ws}\n`);
    expect(marksIn(w.ws)).toEqual(['one', 'two']);
    expect(marksIn(shell)).toEqual([]);
    // resume, too, from anywhere.
    const again = await runCli(['resume', sessionId(), 'three', '--model', marking('three')], { env: env(), cwd: shell });
    expect(again.code, again.stderr).toBe(0);
    expect(marksIn(w.ws)).toEqual(['one', 'two', 'three']);
  });

  it('another --cwd is refused with WORKSPACE_CHANGED naming both paths (exit 2), nothing written; `run --session` and `resume` alike', async () => {
    await runCli(['run', 'one', '--model', marking('one'), '--cwd', w.ws, '--approval', 'auto', '--sandbox', 'off'], { env: env() });
    const before = logText();
    for (const args of [['run', 'two', '--session', sessionId()], ['resume', sessionId(), 'two']]) {
      const r = await runCli([...args, '--cwd', other, '--model', marking('two')], { env: env() });
      expect(r.code, args[0]).toBe(2);
      const refusal = r.stderr.split('\n').filter((l) => l.startsWith('bridle:'));
      expect(refusal, args[0]).toEqual([
        `bridle: WORKSPACE_CHANGED: session ${sessionId()} runs in ${w.ws}, as its log says; ${other} is another workspace (run it without --cwd to use its own, or pass --move-workspace to move it there, which is logged)`,
      ]);
    }
    expect(logText()).toBe(before);
    expect(marksIn(other)).toEqual([]);
  });

  it('--move-workspace moves it, logged as a policy change; later runs, replay and a fork go on in the new workspace', async () => {
    await runCli(['run', 'one', '--model', marking('one'), '--cwd', w.ws, '--approval', 'auto', '--sandbox', 'off'], { env: env() });
    const id = sessionId();
    const moved = await runCli(['resume', id, 'two', '--cwd', other, '--move-workspace', '--model', marking('two')], { env: env() });
    expect(moved.code, moved.stderr).toBe(0);
    const log = readSessionLog(w.home);
    const at = log.findIndex((e) => e.kind === 'session/policy');
    expect(log[at]).toMatchObject({ by: 'move-workspace', cwd: { from: w.ws, to: other } });
    expect(log[at - 1]!.kind).toBe('session/reopen');
    expect(marksIn(other)).toEqual(['two']);
    // From now on the log says `other`: no --cwd runs there, and the first tree is the one refused.
    const next = await runCli(['run', 'three', '--session', id, '--model', marking('three')], { env: env(), cwd: shell });
    expect(next.code, next.stderr).toBe(0);
    expect(marksIn(other)).toEqual(['two', 'three']);
    const back = await runCli(['run', 'four', '--session', id, '--cwd', w.ws, '--model', marking('four')], { env: env() });
    expect(back.code).toBe(2);
    expect(back.stderr).toContain(`runs in ${other}, as its log says; ${w.ws} is another workspace`);
    const replay = await runCli(['replay', id, '--machines'], { env: env() });
    expect(replay.code, replay.stdout + replay.stderr).toBe(0);
    const fork = await runCli(['fork', id], { env: env() });
    expect(fork.code, fork.stderr).toBe(0);
    const forkLog = /^log: (.+)$/m.exec(fork.stdout)![1]!;
    const onFork = await runCli(['run', 'five', '--session', forkLog, '--model', marking('five')], { env: env(), cwd: shell });
    expect(onFork.code, onFork.stderr).toBe(0);
    expect(marksIn(other)).toEqual(['two', 'three', 'five']);
  });
});
