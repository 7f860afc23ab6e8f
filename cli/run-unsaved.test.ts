/**
 * `bridle run` when the log cannot be saved (ADR 0017), in-process with the
 * real JSONL store whose fdatasync fails (EIO): exit 1, one line saying the
 * session could not be saved and naming the error, and nothing — text or
 * `--json` — that says the turn completed. (A real full disk, through the
 * compiled CLI: test/fault/full-disk.test.ts.)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { tempDir } from '../test/helpers/temp.js';

/** Which fdatasync calls on each file descriptor fail (1-based, counted per descriptor: per store). */
const failing = { at: new Set<number>() };
const counts = new Map<number, number>();
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  const eio = () => Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
  const fdatasync = (fd: number, done: (e: NodeJS.ErrnoException | null) => void) => {
    const n = (counts.get(fd) ?? 0) + 1;
    counts.set(fd, n);
    return failing.at.has(n) ? done(eio()) : real.fdatasync(fd, done);
  };
  return { ...real, default: { ...real, fdatasync }, fdatasync };
});
const { runPrompt } = await import('./run.js');
const { composeProduct } = await import('./settings.js');

let dir: string;
let out = '';
let err = '';
beforeEach(() => {
  dir = fs.realpathSync(tempDir('bridle-unsaved-'));
  fs.mkdirSync(path.join(dir, 'ws'));
  vi.stubEnv('BRIDLE_HOME', path.join(dir, 'home'));
  out = err = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((s) => ((out += String(s)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((s) => ((err += String(s)), true));
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  failing.at.clear();
  counts.clear();
  fs.rmSync(dir, { recursive: true, force: true });
});

const script = (text = 'all done: completed') => {
  const f = path.join(dir, 'model.json');
  fs.writeFileSync(f, JSON.stringify({ responses: [{ text }] }));
  return `scripted:${f}`;
};
const flags = (extra: object = {}) => ({ model: script(), cwd: path.join(dir, 'ws'), approval: 'auto', sandbox: 'off', ...extra });
const saidUnsaved = () => err.split('\n').filter((l) => l.includes('could not be saved'));

describe('bridle run, when the save fails', () => {
  it("turn/end's flush fails: exit 1, one line naming LOG_NOT_DURABLE and EIO, never 'ended: completed'", async () => {
    failing.at.add(1);
    const code = await runPrompt('hello', await composeProduct(flags()), flags());
    expect(code).toBe(1);
    expect(saidUnsaved()).toEqual([expect.stringMatching(/^bridle: the session could not be saved \(LOG_NOT_DURABLE: .*EIO: i\/o error, fdatasync\); the turn did not complete/)]);
    expect(`${out}${err}`).not.toMatch(/ended: completed/);
  });

  it('--json: no turn/end line at all (it was never saved), and the note that says why', async () => {
    failing.at.add(1);
    const code = await runPrompt('hello', await composeProduct(flags({ json: true })), flags({ json: true }));
    expect(code).toBe(1);
    const kinds = out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { kind: string });
    expect(kinds.map((e) => e.kind)).not.toContain('turn/end');
    expect(kinds.find((e) => e.kind === 'log/not-durable')).toMatchObject({ sysCode: 'EIO' });
    expect(saidUnsaved()).toHaveLength(1);
  });

  it("the checkpoint written at idle rides in the turn end's sync (ADR 0073): closing syncs nothing more, so a third sync that would fail never runs", async () => {
    // The input's sync, then the turn's end with the checkpoint: the round starts at the end of the tick, after the
    // checkpoint was appended. (Before ADR 0073 the close synced the checkpoint on its own, a third sync.)
    failing.at.add(3);
    const code = await runPrompt('hello', await composeProduct(flags()), flags());
    expect(code).toBe(0);
    expect(out).toMatch(/turn t1 ended: completed/);
    expect(saidUnsaved()).toEqual([]);
    expect([...counts.values()]).toEqual([2]);
  });

  it('nothing fails: the turn is shown once it is durable, exit 0, no such line', async () => {
    const code = await runPrompt('hello', await composeProduct(flags()), flags());
    expect(code).toBe(0);
    expect(out).toMatch(/turn t1 ended: completed/);
    expect(saidUnsaved()).toEqual([]);
  });
});
