/**
 * The JSONL writer lock (ADR 0017, ADR 0040): taken atomically, refused
 * naming a live holder, a dead holder's lock taken over (and said), another
 * host's never judged, released only by its owner. A holder is judged by its
 * socket, never by its pid. Real processes: test/fault/writer-lock.test.ts.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SessionLockedError } from '../../log/errors.js';
import { acquireJsonlLock, isProcessAlive, lockPathOf, lockSocketOf, probeSocket, withWriterLock } from './jsonl-lock.js';
import { createMemoryStore } from './memory.js';
import { tempDir } from '../../test/helpers/temp.js';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});
const logIn = () => join((dir = realpathSync(tempDir('bridle-lock-'))), 'sessions', 's.jsonl');
const DEAD = 2 ** 22 + 12345; // above pid_max's default: no such process
/** A socket file nobody listens on: what a holder killed outright leaves (bound by a process that is then SIGKILLed). */
const deadSocketAt = (path: string) => {
  spawnSync(process.execPath, ['-e', `process.chdir(${JSON.stringify(join(path, '..'))}); require('net').createServer().listen(${JSON.stringify(path.split('/').at(-1))}, () => process.kill(process.pid, 'SIGKILL'))`]);
  expect(probeSocket(path)).toBe('dead');
};
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

  it('a live holder whose pid this process cannot see (another PID namespace) is not judged stale: refused, naming it', () => {
    const log = logIn();
    // The holder lives (its socket is listening) but its pid means nothing here, as from another PID namespace.
    const holder = acquireJsonlLock(log, { pid: DEAD });
    expect(isProcessAlive(DEAD)).toBe(false);
    expect(() => acquireJsonlLock(log)).toThrow(SessionLockedError);
    expect(() => acquireJsonlLock(log)).toThrow(new RegExp(`pid ${DEAD} on ${hostname()}`));
    expect(JSON.parse(readFileSync(lockPathOf(log), 'utf8')).pid).toBe(DEAD);
    holder.release();
    expect(existsSync(lockSocketOf(log))).toBe(false);
  });

  it('takes over a lock whose holder died (its socket refuses), whatever its pid says, and says whose it was', () => {
    const log = logIn();
    mkdirSync(join(dir!, 'sessions'));
    // pid 1 lives, but the socket it left has nobody listening: the holder is gone.
    writeFileSync(lockPathOf(log), claim(1));
    deadSocketAt(lockSocketOf(log));
    const lock = acquireJsonlLock(log);
    expect(lock.tookOver).toMatchObject({ pid: 1, host: hostname() });
    expect(JSON.parse(readFileSync(lockPathOf(log), 'utf8')).pid).toBe(process.pid);
    expect(probeSocket(lockSocketOf(log))).toBe('live');
    lock.release();
    expect(readdirSync(join(dir!, 'sessions'))).toEqual([]);
  });

  it("an older bridle's claim (no socket) is judged by its pid, as before: a dead one taken over, a live one refused", () => {
    const log = logIn();
    mkdirSync(join(dir!, 'sessions'));
    writeFileSync(lockPathOf(log), claim(DEAD));
    const lock = acquireJsonlLock(log);
    expect(lock.tookOver?.pid).toBe(DEAD);
    // The stale holder's claim, written back by hand, does not make the live lock removable by it.
    lock.release();
    writeFileSync(lockPathOf(log), claim(1));
    expect(() => acquireJsonlLock(log)).toThrow(/pid 1 on/);
    expect(existsSync(lockSocketOf(log))).toBe(false);
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

  it('of two takers that find the same stale lock, only one wins (the takeover guard)', async () => {
    const log = logIn();
    mkdirSync(join(dir!, 'sessions'));
    writeFileSync(lockPathOf(log), claim(DEAD));
    deadSocketAt(lockSocketOf(log));
    // A taker that holds the guard (listening on it): the other is refused while it does.
    const taker = createServer((c) => c.destroy());
    await new Promise<void>((resolve) => taker.listen(`${lockPathOf(log)}.takeover`, resolve));
    try {
      expect(() => acquireJsonlLock(log)).toThrow(/taking over its stale lock/);
    } finally {
      await new Promise<void>((resolve) => taker.close(() => resolve()));
    }
    // A guard left by a taker that died is cleared, and the takeover goes on.
    deadSocketAt(`${lockPathOf(log)}.takeover`);
    const lock = acquireJsonlLock(log);
    expect(lock.tookOver?.pid).toBe(DEAD);
    expect(existsSync(`${lockPathOf(log)}.takeover`)).toBe(false);
    lock.release();
  });

  it('a log path too long for a UNIX socket name still gets its lock (through its directory descriptor)', () => {
    const log = join(logIn(), '..', 'd'.repeat(120), 's.jsonl');
    const lock = acquireJsonlLock(log);
    expect(probeSocket(lockSocketOf(log))).toBe('live');
    expect(() => acquireJsonlLock(log)).toThrow(SessionLockedError);
    lock.release();
    expect(existsSync(lockSocketOf(log))).toBe(false);
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
