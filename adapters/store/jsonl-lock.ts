/**
 * The JSONL provider's writer lock (ADR 0017, ADR 0040): a UNIX socket beside
 * the log, `<log>.lock.sock`, that the one process which may append to it
 * listens on, and a claim file, `<log>.lock`, holding `{ pid, host, since }`
 * of that process for the message.
 *
 * The socket is the lock: `bind` is atomic (a second bind of the path fails),
 * and the kernel closes it when its holder dies, however it dies. A holder is
 * judged by connecting to it: a connection means a live holder, `ECONNREFUSED`
 * a dead one (its socket file outlived it), whatever its pid says — a pid is
 * meaningless across PID namespaces (two containers sharing a volume and a
 * host name), where the pid rule of ADR 0017 took a live writer's lock. A dead
 * holder's socket is replaced under a short-lived guard socket
 * (`<log>.lock.takeover`, judged the same way), re-checked under it, so two
 * processes that both find it dead cannot both win. A claim file with no
 * socket beside it is an older bridle's: judged by the old rule (its pid on
 * this host). A lock from another host is never judged. Released on close and
 * when the process exits; a process killed outright leaves the files, and the
 * next taker finds the socket dead.
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { createServer } from 'node:net';
import { hostname } from 'node:os';
import { basename, dirname } from 'node:path';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { LogAccessError, SessionLockedError, LogAccessCode, type LockHolder } from '../../log/errors.js';
import type { LogStore } from '../../log/store.js';
import type { WriterLock } from '../../ports/store.js';

export interface JsonlLockOptions {
  /** This process, as the lock names it (tests pass others). */
  pid?: number;
  host?: string;
  /** Real time: the lock is not the log. */
  now?: () => Date;
  /** Whether `pid` is a live process on this host, for an older bridle's claim with no socket (default: signal 0, and a zombie is dead). */
  isAlive?: (pid: number) => boolean;
}

export const lockPathOf = (logPath: string): string => `${logPath}.lock`;
export const lockSocketOf = (logPath: string): string => `${lockPathOf(logPath)}.sock`;
const guardOf = (logPath: string): string => `${lockPathOf(logPath)}.takeover`;

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

/**
 * A socket path short enough for `sun_path` (~107 bytes; Node cuts a longer one silently and binds elsewhere):
 * a long one is reached through an open descriptor of its directory, `/proc/self/fd/N/<name>`.
 */
function shortPath(path: string): { path: string; done: () => void } {
  if (Buffer.byteLength(path) <= 100) return { path, done: () => {} };
  const fd = openSync(dirname(path), 'r');
  const short = `/proc/self/fd/${fd}/${basename(path)}`;
  if (Buffer.byteLength(short) > 100) {
    closeSync(fd);
    throw Object.assign(new Error(`the lock's socket name ${basename(path)} is too long for a UNIX socket`), { code: 'ENAMETOOLONG' });
  }
  return { path: short, done: () => closeSync(fd) };
}

/** A socket this process listens on; `close` removes its file first (as Node does for a short path), so no newer one is removed. */
interface Listening {
  close(): void;
}

function whyNotCreatable(path: string): Error | undefined {
  const probe = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    closeSync(openSync(probe, 'wx', 0o600));
    tryUnlink(probe);
    return undefined;
  } catch (err) {
    return err as Error;
  }
}

/** Listens on `path`: undefined when something is there already. Never keeps the process alive. */
function listenOn(path: string): Listening | undefined {
  const at = shortPath(path);
  try {
    const server = createServer((c) => c.destroy());
    // A bind that fails reports it on the next tick; whether it succeeded is known now (`listening`).
    server.on('error', () => {});
    server.listen(at.path);
    if (server.listening) {
      server.unref();
      // Through a directory descriptor (closed by now), Node cannot remove the file itself.
      const viaFd = at.path !== path;
      return {
        close: () => {
          if (viaFd) tryUnlink(path);
          server.close();
        },
      };
    }
    server.close();
    if (existsSync(path)) return undefined;
    // Node tells why a bind failed only a tick later: the directory's own answer to creating a file there says it now (ENOSPC, EACCES, EROFS).
    throw whyNotCreatable(path) ?? Object.assign(new Error(`cannot listen on ${path}`), { code: 'EADDRNOTAVAIL' });
  } finally {
    at.done();
  }
}

/**
 * The probe runs in a child: Node's connect is asynchronous, and taking the lock never waits on the event loop.
 * It connects to every path it is given at once (a long one through its directory's descriptor, as it was bound)
 * and prints one code per path: `live`, or the connect's error.
 */
const PROBE = `const fs = require('fs'), net = require('net'), path = require('path');
const paths = process.argv.slice(1), out = paths.map(() => 'PENDING');
const done = () => { if (!out.includes('PENDING')) { process.stdout.write(out.join(' ')); process.exit(0) } };
paths.forEach((p, i) => {
  let at = p;
  try { if (Buffer.byteLength(p) > 100) at = '/proc/self/fd/' + fs.openSync(path.dirname(p), 'r') + '/' + path.basename(p) } catch (e) { out[i] = e.code || 'ERR'; return }
  const s = net.connect(at);
  s.on('connect', () => { out[i] = 'live'; s.destroy(); done() });
  s.on('error', (e) => { out[i] = e.code || 'ERR'; done() });
});
done();`;

export type SocketState = 'live' | 'dead' | 'absent';

/**
 * Whether a process listens on each socket of `paths`, from one probe process. Contract: never throws; `dead`
 * only on `ECONNREFUSED` (a socket file nobody listens on, or not a socket), `absent` on `ENOENT`; anything else
 * (a full backlog, a probe that could not run) is `live`, so a lock is never taken on a doubt.
 */
export function probeSockets(paths: readonly string[]): SocketState[] {
  if (paths.length === 0) return [];
  const r = spawnSync(process.execPath, ['-e', PROBE, ...paths], { encoding: 'utf8', timeout: 10_000, env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'ignore'] });
  const codes = (r.stdout ?? '').trim().split(' ');
  return paths.map((_, i) => (codes[i] === 'ECONNREFUSED' ? 'dead' : codes[i] === 'ENOENT' ? 'absent' : 'live'));
}

export const probeSocket = (path: string): SocketState => probeSockets([path])[0]!;

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
  return new LogAccessError(LogAccessCode.LOG_UNWRITABLE, `cannot take the session's lock ${lock}: ${(err as Error).message ?? code}`, code);
};

function tryUnlink(path: string): void {
  try {
    unlinkSync(path);
  } catch {}
}

/** Writes `body` to `path` whole, replacing what is there: written aside, then renamed, so no reader meets half a claim. */
function writeWhole(path: string, body: string): void {
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
    renameSync(tmp, path);
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

const sameProcess = (c: LockHolder, pid: number, host: string) => c.pid === pid && c.host === host;

/**
 * Contract: as `AcquireWriterLock` (ports/store.ts): a held lock, or
 * `SessionLockedError` naming the live holder (this process included), or
 * `LogAccessError` when the lock cannot be written (a read-only or full
 * disk). Never waits on the event loop; judging a socket left behind runs a
 * short probe process.
 */
export function acquireJsonlLock(logPath: string, opts: JsonlLockOptions = {}): WriterLock {
  const lock = lockPathOf(logPath);
  const sock = lockSocketOf(logPath);
  const guard = guardOf(logPath);
  const pid = opts.pid ?? process.pid;
  const host = opts.host ?? hostname();
  const alive = opts.isAlive ?? isProcessAlive;
  const me: LockHolder = { pid, host, since: (opts.now?.() ?? new Date()).toISOString() };
  const body = `${JSON.stringify(me)}\n`;
  const refuse = (current: Read, why?: string): never => {
    if (current.kind === 'claim') throw new SessionLockedError(current.claim, lock, why ?? (sameProcess(current.claim, pid, host) ? 'that is this process: it has the session open already' : undefined));
    throw new SessionLockedError(undefined, lock, why ?? (current.kind === 'unreadable' ? `its lock file cannot be read (${current.why}); remove it if no bridle process writes this session` : 'its holder has not yet written its claim'));
  };

  const claimed = (server: Listening, tookOver?: LockHolder): WriterLock => {
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      held.delete(release);
      // Only our own claim is removed: one that replaced it is not ours to end. The claim goes first, so no claim is ever left without its socket.
      const now = readClaim(lock);
      if (now.kind === 'claim' && now.text === body) tryUnlink(lock);
      server.close();
    };
    releaseAtExit(release);
    return { location: lock, holder: me, ...(tookOver ? { tookOver } : {}), release };
  };

  try {
    mkdirSync(dirname(lock), { recursive: true, mode: 0o700 });
    const take = (server: Listening, before: Read): WriterLock => {
      try {
        writeWhole(lock, body);
      } catch (err) {
        // A claim that cannot be written (a full disk): the lock is not kept either.
        server.close();
        throw err;
      }
      return claimed(server, before.kind === 'claim' ? before.claim : undefined);
    };
    for (let attempt = 0; attempt < 8; attempt++) {
      const server = listenOn(sock);
      if (server) {
        // The lock is ours. A claim file with no socket beside it is an older bridle's: judged as it was, by its pid on this host.
        const before = readClaim(lock);
        if (before.kind === 'unreadable' || (before.kind === 'claim' && (before.claim.host !== host || sameProcess(before.claim, pid, host) || alive(before.claim.pid)))) {
          server.close();
          refuse(before);
        }
        return take(server, before);
      }
      const state = probeSocket(sock);
      if (state === 'absent') continue;
      if (state === 'live') refuse(readClaim(lock));
      // Dead: replaced under the guard, and re-checked there, so that of two processes that found it dead only one replaces it.
      const g = listenOn(guard);
      if (!g) {
        if (probeSocket(guard) === 'live') refuse(readClaim(lock), 'another process is taking over its stale lock');
        // A guard whose taker died: cleared (two takers clearing it at once is the race ADR 0017 leaves).
        tryUnlink(guard);
        continue;
      }
      try {
        if (probeSocket(sock) !== 'dead') continue;
        unlinkSync(sock);
        const mine = listenOn(sock);
        // The claim beside a dead socket is its holder's, whatever its pid says.
        if (mine) return take(mine, readClaim(lock));
      } finally {
        g.close();
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

/**
 * The holder of the lock beside each of `logPaths` while it lives, judged as `acquireJsonlLock` judges it (its
 * socket, all probed at once; an older bridle's claim by its pid; another host's taken as held), or null.
 * Contract: never throws; takes nothing.
 */
export function lockHoldersOf(logPaths: readonly string[], opts: Pick<JsonlLockOptions, 'host' | 'isAlive'> = {}): (LockHolder | null)[] {
  const host = opts.host ?? hostname();
  const claims = logPaths.map((p) => readClaim(lockPathOf(p)));
  const ask = logPaths.filter((p, i) => claims[i]!.kind === 'claim' && (claims[i] as { claim: LockHolder }).claim.host === host && existsSync(lockSocketOf(p)));
  const answers = new Map(probeSockets(ask.map(lockSocketOf)).map((state, i) => [ask[i]!, state]));
  return logPaths.map((p, i) => {
    const c = claims[i]!;
    if (c.kind !== 'claim') return null;
    if (c.claim.host !== host) return c.claim;
    const state = answers.get(p) ?? 'absent';
    if (state !== 'absent') return state === 'live' ? c.claim : null;
    return (opts.isAlive ?? isProcessAlive)(c.claim.pid) ? c.claim : null;
  });
}

export const lockHolderOf = (logPath: string, opts: Pick<JsonlLockOptions, 'host' | 'isAlive'> = {}): LockHolder | null => lockHoldersOf([logPath], opts)[0]!;

/** Whether anything of a lock (its claim, its socket) is beside `logPath`. */
export const hasLockFiles = (logPath: string): boolean => existsSync(lockPathOf(logPath)) || existsSync(lockSocketOf(logPath));
