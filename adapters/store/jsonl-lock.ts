/**
 * The JSONL provider's writer lock (ADR 0017): a lock file beside the log,
 * `<log>.lock`, holding `{ pid, host, since }` of the one process that may
 * append to it.
 *
 * Taken atomically: the claim is written whole to a file of its own (created
 * `O_CREAT|O_EXCL`) and published with `link()`, which fails if a lock is
 * there — so no reader ever meets a half-written lock (where `link` is not
 * supported, the lock is created `O_CREAT|O_EXCL` and written in place).
 * A lock whose pid is dead on this host is stale: it is taken over under a
 * short-lived guard file (`<log>.lock.takeover`, taken the same way), so two
 * processes that both find it stale cannot both win. A lock from another
 * host is never judged: it is refused, naming its holder. Released on close
 * and when the process exits; a process killed outright leaves it stale.
 */
import { closeSync, linkSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { randomBytes } from 'node:crypto';
import { LogAccessError, SessionLockedError, type LockHolder } from '../../log/errors.js';
import type { LogStore, WriterLock } from '../../ports/store.js';

export interface JsonlLockOptions {
  /** This process, as the lock names it (tests pass others). */
  pid?: number;
  host?: string;
  /** Real time: the lock is not the log. */
  now?: () => Date;
  /** Whether `pid` is a live process on this host (default: signal 0, and a zombie is dead). */
  isAlive?: (pid: number) => boolean;
}

export const lockPathOf = (logPath: string): string => `${logPath}.lock`;

/** Default liveness: `kill(pid, 0)` (EPERM: alive, someone else's), and a zombie awaiting its parent counts as dead. */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    if (state === 'Z' || state === 'X') return false;
  } catch {
    // No /proc (or the process just went): kill's answer stands.
  }
  return true;
}

type Read = { kind: 'claim'; claim: LockHolder; text: string } | { kind: 'gone' } | { kind: 'unreadable'; why: string };

function readClaim(path: string): Read {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'gone' };
    return { kind: 'unreadable', why: (err as NodeJS.ErrnoException).code ?? String(err) };
  }
  try {
    const v = JSON.parse(text) as Partial<LockHolder>;
    if (Number.isInteger(v.pid) && (v.pid as number) > 0 && typeof v.host === 'string' && typeof v.since === 'string') {
      return { kind: 'claim', claim: { pid: v.pid as number, host: v.host, since: v.since }, text };
    }
  } catch {}
  return { kind: 'unreadable', why: `it does not hold a claim (${JSON.stringify(text.slice(0, 60))})` };
}

const unwritable = (lock: string, err: unknown): LogAccessError => {
  const code = (err as NodeJS.ErrnoException).code;
  return new LogAccessError('LOG_UNWRITABLE', `cannot take the session's lock ${lock}: ${(err as Error).message ?? code}`, code);
};

function tryUnlink(path: string): void {
  try {
    unlinkSync(path);
  } catch {}
}

/** Creates `path` holding `body`, atomically; false when it exists. */
function place(path: string, body: string): boolean {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, body);
  } catch (err) {
    tryUnlink(tmp);
    throw err;
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(tmp, path);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw err;
    // A file system without hard links: O_EXCL on the lock itself (a reader may meet it empty for an instant).
    let fd2: number;
    try {
      fd2 = openSync(path, 'wx', 0o600);
    } catch (again) {
      if ((again as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw again;
    }
    try {
      writeSync(fd2, body);
    } finally {
      closeSync(fd2);
    }
    return true;
  } finally {
    tryUnlink(tmp);
  }
}

/** Locks this process holds, released at exit (one hook for them all). */
const held = new Set<() => void>();
let hooked = false;
function releaseAtExit(release: () => void): void {
  held.add(release);
  if (hooked) return;
  hooked = true;
  process.once('exit', () => {
    for (const r of [...held]) r();
  });
}

/**
 * Contract: as `AcquireWriterLock` (ports/store.ts): a held lock, or
 * `SessionLockedError` naming the live holder (this process included), or
 * `LogAccessError` when the lock cannot be written (a read-only or full
 * disk). Never waits.
 */
export function acquireJsonlLock(logPath: string, opts: JsonlLockOptions = {}): WriterLock {
  const lock = lockPathOf(logPath);
  const guard = `${lock}.takeover`;
  const pid = opts.pid ?? process.pid;
  const host = opts.host ?? hostname();
  const alive = opts.isAlive ?? isProcessAlive;
  const me: LockHolder = { pid, host, since: (opts.now?.() ?? new Date()).toISOString() };
  const body = `${JSON.stringify(me)}\n`;
  const stale = (c: LockHolder) => c.host === host && c.pid !== pid && !alive(c.pid);

  const claimed = (tookOver?: LockHolder): WriterLock => {
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      held.delete(release);
      // Only our own claim is removed: one that replaced it (a takeover that judged us gone) is not ours to end.
      const now = readClaim(lock);
      if (now.kind === 'claim' && now.text === body) tryUnlink(lock);
    };
    releaseAtExit(release);
    return { location: lock, holder: me, ...(tookOver ? { tookOver } : {}), release };
  };

  try {
    mkdirSync(dirname(lock), { recursive: true, mode: 0o700 });
    for (let attempt = 0; attempt < 8; attempt++) {
      if (place(lock, body)) return claimed();
      const current = readClaim(lock);
      if (current.kind === 'gone') continue;
      if (current.kind === 'unreadable') throw new SessionLockedError(undefined, lock, `its lock file cannot be read (${current.why}); remove it if no bridle process writes this session`);
      if (!stale(current.claim)) throw new SessionLockedError(current.claim, lock, current.claim.pid === pid && current.claim.host === host ? 'that is this process: it has the session open already' : undefined);
      // Stale: taken over under the guard, so that of two processes that found it stale only one replaces it.
      if (!place(guard, body)) {
        const g = readClaim(guard);
        if (g.kind === 'claim' && stale(g.claim)) tryUnlink(guard);
        else if (g.kind !== 'gone') throw new SessionLockedError(g.kind === 'claim' ? g.claim : current.claim, lock, 'another process is taking over its stale lock');
        continue;
      }
      try {
        const again = readClaim(lock);
        if (again.kind === 'claim' && again.text === current.text) {
          unlinkSync(lock);
          if (place(lock, body)) return claimed(current.claim);
        }
      } finally {
        tryUnlink(guard);
      }
    }
  } catch (err) {
    if (err instanceof SessionLockedError) throw err;
    throw unwritable(lock, err);
  }
  throw new SessionLockedError(undefined, lock, 'its lock kept changing hands; try again');
}

/** `store`, whose `close` also releases `lock` (after the last flush, even when that fails). */
export function withWriterLock<S extends LogStore>(store: S, lock: WriterLock): S {
  const close = async () => {
    try {
      await store.close();
    } finally {
      lock.release();
    }
  };
  return Object.assign(Object.create(store) as S, { close });
}
