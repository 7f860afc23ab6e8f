/** `evalCommand` in-process, on a task made here (the shipped ones run through the built CLI: test/e2e/eval.test.ts). */
import { existsSync, mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../errors.js';
import { evalCommand } from './command.js';
import type { RunRecord, TaskSummary } from './score.js';
import { tempDir } from '../../test/helpers/temp.js';

const root = realpathSync(tempDir('bridle-eval-cmd-'));
/** Workspaces kept by `keep: true`: they live beside, not in, root. */
const kept: string[] = [];
const home = join(root, 'home');
const before = process.env.BRIDLE_HOME;
beforeAll(() => {
  process.env.BRIDLE_HOME = home;
});
afterAll(() => {
  if (before === undefined) delete process.env.BRIDLE_HOME;
  else process.env.BRIDLE_HOME = before;
  for (const k of kept) rmSync(k, { recursive: true, force: true });
  rmSync(root, { recursive: true, force: true });
});

/** A task whose check passes when the turn wrote `done.txt` saying "yes". */
const tasks = join(root, 'tasks');
const task = join(tasks, 'write-done');
mkdirSync(join(task, 'workspace'), { recursive: true });
writeFileSync(join(task, 'workspace', 'README'), 'write done.txt\n');
writeFileSync(join(task, 'task.json'), JSON.stringify({ prompt: 'write done.txt saying yes', check: 'grep -qx yes done.txt' }));
const write = (name: string, responses: unknown[]) => {
  const f = join(root, name);
  writeFileSync(f, JSON.stringify({ label: `scripted: ${name}`, responses }));
  return f;
};
const good = write('good.json', [{ text: 'Writing it.', toolCalls: [{ name: 'write_file', arguments: { path: 'done.txt', content: 'yes\n' } }] }, { text: 'Done.' }]);
const idle = write('idle.json', [{ text: 'Not today.' }]);

function io(evalId: string) {
  let out = '';
  let err = '';
  return { io: { out: { write: (s: string) => (out += s) }, err: { write: (s: string) => (err += s) }, evalId }, out: () => out, err: () => err };
}

interface Doc {
  tasks: TaskSummary[];
  runs: RunRecord[];
}

describe('evalCommand', () => {
  it('scores a passing script 2/2 and an idle one 0/1 (exit 1), from their logs; --replay of those logs gives the same figures', async () => {
    const a = io('e1');
    expect(await evalCommand(tasks, { model: `scripted:${good}`, runs: '2', sandbox: 'off', json: true, keep: true }, a.io)).toBe(0);
    const passed = JSON.parse(a.out()) as Doc;
    kept.push(...passed.runs.map((r) => r.workspace!));
    expect(passed.tasks).toEqual([{ task: 'write-done', model: 'scripted', scripted: true, runs: 2, checked: 2, passes: 2, steps: 2, tokens: null, ms: expect.any(Number) }]);
    expect(passed.runs.map((r) => r.session)).toEqual(['e1.write-done.1', 'e1.write-done.2']);
    expect(a.err()).toContain('model: scripted — ');

    const b = io('e2');
    expect(await evalCommand(tasks, { model: `scripted:${idle}`, sandbox: 'off' }, b.io)).toBe(1);
    expect(b.out()).toMatch(/^write-done\s+scripted\s+0\/1\s+1\s+—/m);
    expect(b.out()).toContain('write-done run 1: check failed (exit 2)');
    expect(existsSync(join(home, 'sessions', 'e2.write-done.1.jsonl'))).toBe(true);

    const c = io('unused');
    expect(await evalCommand(tasks, { replay: passed.runs.map((r) => r.log), sandbox: 'off', json: true }, c.io)).toBe(0);
    const again = JSON.parse(c.out()) as Doc;
    expect(again.tasks).toEqual(passed.tasks);
    expect(again.runs.map((r) => r.check?.passed)).toEqual([true, true]);
  });

  it('refuses what it cannot run, before any run: a bad --runs, --model scripted for a task without scripted.json, no folder', async () => {
    const x = io('e3');
    await expect(evalCommand(tasks, { runs: '0', model: `scripted:${good}` }, x.io)).rejects.toThrow(UsageError);
    await expect(evalCommand(tasks, { model: 'scripted' }, x.io)).rejects.toThrow('--model scripted: no scripted.json in task write-done');
    await expect(evalCommand(undefined, {}, x.io)).rejects.toThrow('eval: name a folder of tasks');
    expect(existsSync(join(home, 'sessions', 'e3.write-done.1.jsonl'))).toBe(false);
  });
});
