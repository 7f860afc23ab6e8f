/**
 * The JSONL writer lock (ADR 0017): taken atomically, refused naming a live
 * holder, a dead holder's lock taken over (and said), another host's never
 * judged, released only by its owner. Real processes: test/fault/writer-lock.test.ts.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SessionLockedError } from '../../log/errors.js';
import { acquireJsonlLock, isProcessAlive, lockPathOf, withWriterLock } from './jsonl-lock.js';
import { createMemoryStore } from './memory.js';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});
const logIn = () => join((dir = realpathSync(mkdtempSync(join(tmpdir(), 'bridle-lock-')))), 'sessions', 's.jsonl');
const DEAD = 2 ** 22 + 12345; // above pid_max's default: no such process
const claim = (pid: number, host = hostname(), since = '2026-01-01T00:00:00.000Z') => `${JSON.stringify({ pid, host, since })}\n`;

describe('acquireJsonlLock', () => {
  it('writes { pid, host, since } beside the log, whole, and removes it on release', () => {
    const log = logIn();
    const lock = acquireJsonlLock(log, { now: () => new Date(Date.UTC(2026, 0, 2)) });
    expect(lock.location).toBe(lockPathOf(log));
    expect(JSON.parse(readFileSync(lockPathOf(log), 'utf8'))).toEqual({ pid: process.pid, host: hostname(), since: '2026-01-02T00:00:00.000Z' });
    expect(lock.tookOver).toBeUndefined();
    lock.release();
    lock.release();
    expect(existsSync(lockPathOf(log))).toBe(false);
    // No temporary file is left behind.
    expect(readdirSync(join(dir!, 'sessions'))).toEqual([]);
  });

  it('refuses a second writer while the first lives, naming it (this process included)', () => {
    const log = logIn();
    const first = acquireJsonlLock(log);
    const err = (() => {
      try {
        acquireJsonlLock(log);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(SessionLockedError);
    expect(err).toMatchObject({ code: 'SESSION_LOCKED', holder: { pid: process.pid, host: hostname() } });
    expect((err as Error).message).toContain(`pid ${process.pid} on ${hostname()}`);
    first.release();
    acquireJsonlLock(log).release();
  });

  it('refuses when the holder is another live process', () => {
    const log = logIn();
    acquireJsonlLock(log, { pid: 1 }); // pid 1 lives
    expect(() => acquireJsonlLock(log)).toThrow(/pid 1 on/);
  });

  it("takes over a dead pid's lock on this host, and says whose it was", () => {
    const log = logIn();
    const stale = acquireJsonlLock(log, { pid: DEAD });
    expect(isProcessAlive(DEAD)).toBe(false);
    const lock = acquireJsonlLock(log);
    expect(lock.tookOver).toEqual(stale.holder);
    expect(JSON.parse(readFileSync(lockPathOf(log), 'utf8')).pid).toBe(process.pid);
    // The stale holder's release (were it to come back) does not remove the lock it lost.
    stale.release();
    expect(existsSync(lockPathOf(log))).toBe(true);
    lock.release();
  });

  it('never judges a lock from another host: refused, naming the host', () => {
    const log = logIn();
    acquireJsonlLock(log, { pid: DEAD, host: 'elsewhere' });
    expect(() => acquireJsonlLock(log)).toThrow(/pid \d+ on elsewhere/);
  });

  it('refuses a lock file it cannot read, saying what to do', () => {
    const log = logIn();
    acquireJsonlLock(log).release();
    writeFileSync(lockPathOf(log), 'not json');
    expect(() => acquireJsonlLock(log)).toThrow(/cannot be read.*remove it/);
  });

  it('of two takers that find the same stale lock, only one wins (the takeover guard)', () => {
    const log = logIn();
    mkdirSync(join(dir!, 'sessions'));
    writeFileSync(lockPathOf(log), claim(DEAD));
    // A taker that holds the guard: the other is refused while it does.
    writeFileSync(`${lockPathOf(log)}.takeover`, claim(1));
    expect(() => acquireJsonlLock(log)).toThrow(/taking over its stale lock/);
    // A guard left by a taker that died is cleared, and the takeover goes on.
    writeFileSync(`${lockPathOf(log)}.takeover`, claim(DEAD + 1));
    const lock = acquireJsonlLock(log);
    expect(lock.tookOver?.pid).toBe(DEAD);
    expect(existsSync(`${lockPathOf(log)}.takeover`)).toBe(false);
    lock.release();
  });

  it('a store under the lock releases it when it closes', async () => {
    const log = logIn();
    const lock = acquireJsonlLock(log);
    const store = withWriterLock(createMemoryStore(), lock);
    expect(existsSync(lockPathOf(log))).toBe(true);
    await store.close();
    expect(existsSync(lockPathOf(log))).toBe(false);
  });
});
