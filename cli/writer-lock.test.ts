/**
 * One writer per session at the CLI's door (ADR 0017), in-process: every
 * command that writes a session (`run`, `run --session`, `resume`, `serve`'s
 * opens) takes its lock through `openSession` or resume's repair; a stale
 * lock is taken over and said in the log; a live one refuses, writing
 * nothing. With real processes: test/fault/writer-lock.test.ts.
 */
import fs from 'node:fs';
import { hostname } from 'node:os';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { lockPathOf } from '../adapters/store/jsonl-lock.js';
import { SessionLockedError } from '../log/errors.js';
import { parseLog } from '../log/parse.js';
import { verifyLog } from '../log/verify.js';
import { checkCheckpoints } from '../machines/session-fold.js';
import { replayThroughMachines } from '../replay/replay.js';
import { builtinTools } from '../tools/index.js';
import { openSession } from './open-session.js';
import { composeProduct } from './settings.js';
import { resumeCommand } from './resume.js';
import { tempDir } from '../test/helpers/temp.js';

let dir: string;
let err = '';
const sink = { write: (s: string) => (err += s) };
beforeEach(() => {
  dir = fs.realpathSync(tempDir('bridle-wlock-'));
  fs.mkdirSync(path.join(dir, 'ws'));
  vi.stubEnv('BRIDLE_HOME', path.join(dir, 'home'));
  err = '';
});
afterEach(() => {
  vi.unstubAllEnvs();
  fs.rmSync(dir, { recursive: true, force: true });
});

const DEAD = 2 ** 22 + 4242;
const model = () => {
  const f = path.join(dir, 'model.json');
  fs.writeFileSync(f, JSON.stringify({ responses: [{ text: 'one' }, { text: 'two' }] }));
  return `scripted:${f}`;
};
const opts = async (extra: object = {}) => ({ product: await composeProduct({ model: model(), approval: 'auto', sandbox: 'off' }), cwd: path.join(dir, 'ws'), ...extra });

/** A session with one finished turn, closed; its log path. */
async function finishedSession(): Promise<string> {
  const o = await openSession(await opts());
  o.start();
  await o.session.run('first');
  await o.session.close();
  expect(fs.existsSync(lockPathOf(o.logPath))).toBe(false);
  return o.logPath;
}

describe('openSession takes the writer lock', () => {
  it('holds it while the session is open and releases it on close', async () => {
    const o = await openSession(await opts());
    o.start();
    expect(JSON.parse(fs.readFileSync(lockPathOf(o.logPath), 'utf8'))).toMatchObject({ pid: process.pid, host: hostname() });
    await o.session.run('hi');
    await o.session.close();
    expect(fs.existsSync(lockPathOf(o.logPath))).toBe(false);
  });

  it('refuses a session another live process holds, naming it, and writes nothing', async () => {
    const log = await finishedSession();
    const before = fs.readFileSync(log, 'utf8');
    fs.writeFileSync(lockPathOf(log), `${JSON.stringify({ pid: 1, host: hostname(), since: '2026-01-01T00:00:00.000Z' })}\n`);
    const again = await opts({ session: log });
    await expect(openSession(again)).rejects.toThrow(SessionLockedError);
    await expect(openSession(again)).rejects.toThrow(`pid 1 on ${hostname()}`);
    expect(fs.readFileSync(log, 'utf8')).toBe(before);
    expect(JSON.parse(fs.readFileSync(lockPathOf(log), 'utf8')).pid).toBe(1);
  });

  it('a second open in the same process is refused too', async () => {
    const o = await openSession(await opts());
    o.start();
    const second = await opts({ session: o.logPath });
    await expect(openSession(second)).rejects.toThrow(SessionLockedError);
    await o.session.close();
  });

  it('takes over a dead holder\'s lock, logs session/takeover, and the log verifies and replays', async () => {
    const log = await finishedSession();
    fs.writeFileSync(lockPathOf(log), `${JSON.stringify({ pid: DEAD, host: hostname(), since: '2026-01-01T00:00:00.000Z' })}\n`);
    const o = await openSession(await opts({ session: log }));
    o.start();
    expect(o.session.recorder.entries.at(-1)).toMatchObject({ kind: 'session/takeover', stale: { pid: DEAD }, by: { pid: process.pid } });
    await o.session.run('second');
    await o.session.close();
    const entries = parseLog(fs.readFileSync(log, 'utf8')).entries;
    expect(verifyLog(entries, { checkpoints: checkCheckpoints }).violations).toEqual([]);
    const r = await replayThroughMachines(entries, builtinTools());
    expect(r.identical, r.note).toBe(true);
  });
});

describe("resume's repair takes the lock", () => {
  it('refuses while another live process holds it, before repairing anything', async () => {
    const log = await finishedSession();
    const before = fs.readFileSync(log, 'utf8');
    fs.writeFileSync(lockPathOf(log), `${JSON.stringify({ pid: 1, host: hostname(), since: '2026-01-01T00:00:00.000Z' })}\n`);
    await expect(resumeCommand(log, undefined, {}, sink)).rejects.toThrow(SessionLockedError);
    expect(fs.readFileSync(log, 'utf8')).toBe(before);
  });

  it('takes over a stale lock even when there is nothing to repair, and says so in the log', async () => {
    const log = await finishedSession();
    fs.writeFileSync(lockPathOf(log), `${JSON.stringify({ pid: DEAD, host: hostname(), since: '2026-01-01T00:00:00.000Z' })}\n`);
    expect(await resumeCommand(log, undefined, {}, sink)).toBe(0);
    expect(err).toContain(`took over: pid ${DEAD}`);
    const entries = parseLog(fs.readFileSync(log, 'utf8')).entries;
    expect(entries.at(-1)).toMatchObject({ kind: 'session/takeover', stale: { pid: DEAD } });
    expect(fs.existsSync(lockPathOf(log))).toBe(false);
    expect(verifyLog(entries, { checkpoints: checkCheckpoints }).violations).toEqual([]);
    expect((await replayThroughMachines(entries, builtinTools())).identical).toBe(true);
  });
});
