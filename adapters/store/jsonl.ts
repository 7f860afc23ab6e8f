/**
 * The JSONL store: one entry per line, appended with synchronous writes (so a
 * line is in the file in seq order before `append` returns) and fsynced by
 * `flush` at the durability points. A sync runs in the process's next round
 * of flushes (`flush-rounds.ts`, ADR 0073): at the end of the tick it was
 * asked for in, so the flushes asked for in one run of the machines (the
 * dispatches of parallel calls released together, ADR 0028) share it, and
 * every other session's syncs of that tick run beside it.
 *
 * A new file is only durable once its directory entry is: the first flush
 * after creating the log (and any directory above it, such as `sessions/`)
 * also fsyncs each directory that gained an entry.
 *
 * A new log appears with its first line (ADR 0087): the store opens a file
 * beside it (`<log>.<pid>.<n>.new`), writes the first line there, and only
 * then links it into place — a link, not a rename, so a log that appeared
 * meanwhile is never replaced. A kill before the first line leaves no log
 * (at most that stray file, which no reader lists), never an empty one.
 *
 * Failures (ADR 0017). A sync that fails is final for this store: every
 * later flush rejects with it. Linux may drop the pages a failed fsync
 * covered and report the next fsync as a success, so a retry could call
 * lost entries durable. A write cut short (ENOSPC mid-line) is cut back off
 * the file, so the next line does not follow half a line; if even that
 * fails, the store refuses every later append.
 */
import * as nodeFs from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { SESSION, STORE } from '../../ports/index.js';
import { defineProvider } from '../../ports/provider.js';
import type { LogStore } from '../../log/store.js';
import type { OpenedLog, SessionStore, WriterLock } from '../../ports/store.js';
import { acquireJsonlLock, withWriterLock } from './jsonl-lock.js';
import { readLogLines, readStoredLog } from './jsonl-read.js';
import { listJsonl } from './jsonl-list.js';
import { forksIn } from './jsonl-forks.js';
import { mendTail } from './jsonl-mend.js';
import type { Entry } from '../../log/entries.js';
import { LogAccessError, LogAccessCode } from '../../log/errors.js';
import { createFlushRounds, type FlushRounds, type RunRound } from './flush-rounds.js';

type Done = (err: NodeJS.ErrnoException | null) => void;

/** The file system calls the store makes (`node:fs` by default); tests pass one that records them. */
export interface JsonlFs {
  mkdirSync(path: string, opts: { recursive: true; mode: number }): string | undefined;
  openSync(path: string, flags: string, mode?: number): number;
  writeSync(fd: number, buf: Buffer, offset: number): number;
  ftruncateSync(fd: number, len: number): void;
  fstatSync(fd: number): { size: number };
  fdatasync(fd: number, done: Done): void;
  fsync(fd: number, done: Done): void;
  open(path: string, flags: string, done: (err: NodeJS.ErrnoException | null, fd: number) => void): void;
  close(fd: number, done: Done): void;
  closeSync(fd: number): void;
  /** Default `node:fs`'s: a new log is linked into place with its first line, and the file beside it removed. */
  linkSync?(existing: string, path: string): void;
  unlinkSync?(path: string): void;
}

export interface JsonlStoreOptions {
  fs?: JsonlFs;
  /** The rounds this log's syncs run in; default the process's (`jsonlRounds`), shared by every JSONL log. */
  rounds?: FlushRounds<JsonlSync>;
}

/** A JSONL log as a round of flushes sees it. */
export interface JsonlSync {
  /** Its fdatasync (and its new directories'). Contract: covers every line appended before it was called. */
  sync(): Promise<void>;
}

/** One round: every log's sync at once (one fdatasync per file; the kernel runs them side by side), each its own outcome. */
export const syncAll: RunRound<JsonlSync> = (logs) => Promise.all(logs.map((l) => l.sync().then(() => undefined, (err: unknown) => (err instanceof Error ? err : new Error(String(err))))));

/** The process's rounds of JSONL syncs (ADR 0073): every session's flushes of a tick share one round. */
export const jsonlRounds: FlushRounds<JsonlSync> = createFlushRounds(syncAll);

/** The directories that gained an entry when `created` (mkdir's first new directory) and everything down to `dir` were made. */
function parentsOfCreated(dir: string, created: string | undefined): string[] {
  if (created === undefined) return [];
  const out: string[] = [];
  for (let d = dir; ; d = dirname(d)) {
    out.push(dirname(d));
    if (d === created || dirname(d) === d) return out;
  }
}

/** How many new logs this process has opened: each one's file beside it has a name of its own. */
let asides = 0;

/** The open log file, as the store's jobs (opening, appending, syncing, closing) share it. */
interface LogFile {
  readonly fs: JsonlFs;
  readonly path: string;
  readonly fd: number;
  readonly link: (existing: string, path: string) => void;
  readonly unlink: (path: string) => void;
  /** A new log's file beside it, until its first line links it into place. */
  aside: string | undefined;
  /** The directories that gained an entry and are not yet fsynced: a new file is durable only once they are. */
  pendingDirs: string[];
  /** Where the next line starts: the file's length after the last whole line. */
  end: number;
  /** A line was appended since the last sync started. */
  dirty: boolean;
  /** A cut-short write that could not be cut back off, or a first line not linked into place: no later line is written. */
  wedged: Error | undefined;
}

function unwritable(what: string, err: unknown): LogAccessError {
  const code = (err as NodeJS.ErrnoException).code;
  return new LogAccessError(LogAccessCode.LOG_UNWRITABLE, `cannot ${what}: ${code ?? (err as Error).message}`, code);
}

/**
 * Makes the log's directory and opens the log for appending: an existing log in place, a new one as the file
 * beside it (ADR 0087). Contract: throws `LogAccessError` (`LOG_UNWRITABLE`).
 */
function openLogFile(fs: JsonlFs, path: string): LogFile {
  const dir = dirname(path);
  let pendingDirs: string[];
  try {
    pendingDirs = parentsOfCreated(dir, fs.mkdirSync(dir, { recursive: true, mode: 0o700 }));
  } catch (err) {
    throw unwritable(`create the log directory ${dir}`, err);
  }
  const link = fs.linkSync ?? nodeFs.linkSync;
  const unlink = fs.unlinkSync ?? nodeFs.unlinkSync;
  let fd: number;
  let aside: string | undefined;
  if (nodeFs.existsSync(path)) {
    try {
      fd = fs.openSync(path, 'a', 0o600);
    } catch (err) {
      throw unwritable(`open the log ${path} for appending`, err);
    }
  } else {
    aside = `${path}.${process.pid}.${++asides}.new`;
    try {
      fd = fs.openSync(aside, 'ax', 0o600);
    } catch (err) {
      throw unwritable(`create the log ${path}`, err);
    }
    pendingDirs.unshift(dir);
  }
  return { fs, path, fd, link, unlink, aside, pendingDirs, end: fs.fstatSync(fd).size, dirty: false, wedged: undefined };
}

/** Writes one line whole, or cuts what was written of it back off (wedging the file if even that fails). */
function appendLine(file: LogFile, line: string): void {
  if (file.wedged) throw file.wedged;
  const buf = Buffer.from(line + '\n', 'utf8');
  let off = 0;
  try {
    while (off < buf.length) off += file.fs.writeSync(file.fd, buf, off);
  } catch (err) {
    if (off > 0) {
      try {
        file.fs.ftruncateSync(file.fd, file.end);
      } catch (cut) {
        file.wedged = Object.assign(new Error(`log ${file.path} ends in a cut-off line that could not be removed (${(cut as Error).message}); no more lines are written after it`), { code: (cut as NodeJS.ErrnoException).code });
      }
    }
    throw err;
  }
  file.end += buf.length;
  file.dirty = true;
  if (file.aside !== undefined) placeFirstLine(file);
}

/** The first line is in the file beside the log: the log appears with it; one that appeared meanwhile is not replaced. */
function placeFirstLine(file: LogFile): void {
  const from = file.aside!;
  try {
    file.link(from, file.path);
  } catch (err) {
    // This store's line stays unwritten: the next append (and a flush) is refused with the reason.
    file.wedged = Object.assign(new Error(`cannot create the log ${file.path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`), { code: (err as NodeJS.ErrnoException).code });
    throw file.wedged;
  }
  file.aside = undefined;
  try {
    file.unlink(from);
  } catch {
    // Left beside the log under a name no reader lists; the log itself is whole.
  }
}

/** A new log closed before its first line: nothing is left behind. */
function dropAside(file: LogFile): void {
  if (file.aside === undefined) return;
  try {
    file.unlink(file.aside);
  } catch {}
  file.aside = undefined;
}

function syncDir(fs: JsonlFs, d: string): Promise<void> {
  return new Promise<void>((resolve, reject) =>
    fs.open(d, 'r', (err, dfd) => {
      if (err) return reject(err);
      fs.fsync(dfd, (syncErr) => fs.close(dfd, () => (syncErr ? reject(syncErr) : resolve())));
    }),
  );
}

/** The file's fdatasync, then the directory entries that lead to a new file: its new entries are only durable once those are. */
async function syncFile(file: LogFile): Promise<void> {
  file.dirty = false;
  await new Promise<void>((resolve, reject) => file.fs.fdatasync(file.fd, (err) => (err ? reject(err) : resolve())));
  for (const d of file.pendingDirs.slice()) {
    await syncDir(file.fs, d);
    file.pendingDirs = file.pendingDirs.filter((x) => x !== d);
  }
}

/**
 * The file's flushes, as group fsyncs in the process's rounds (ADR 0073).
 * Contract: a flush resolves only once every line appended before it is durable; after a sync fails, every flush rejects with that failure.
 */
function groupFlush(file: LogFile, rounds: FlushRounds<JsonlSync>): () => Promise<void> {
  let inflight: Promise<void> | undefined;
  /** A sync asked for that has not started yet: a flush asked for before it starts joins it. */
  let queued: Promise<void> | undefined;
  /** The first sync that failed: no later flush may report success (see above). */
  let syncFailed: Error | undefined;
  /** This log in a round. */
  const member: JsonlSync = {
    sync() {
      queued = undefined;
      return syncFile(file);
    },
  };
  return () => {
    if (syncFailed) return Promise.reject(syncFailed);
    // A sync asked for but not yet started covers every line appended before it starts: join it (group fsync).
    if (queued) return queued;
    // Nothing new: the caller still must not hear "durable" before a sync already under way has finished.
    if (!file.dirty && file.pendingDirs.length === 0) return inflight ?? Promise.resolve();
    // The sync runs in the next round of the process's flushes (ADR 0073): at the end of this tick, with every
    // other session's, or after the round under way. `dirty` is cleared as it starts, so a line appended while
    // it runs asks for one of its own; a failure is final (syncFailed).
    const sync = rounds.request(member).catch((err: unknown) => {
      queued = undefined;
      syncFailed ??= err instanceof Error ? err : new Error(String(err));
      throw syncFailed;
    });
    queued = sync;
    inflight = sync;
    void sync.then(
      () => {
        if (inflight === sync) inflight = undefined;
      },
      () => {
        if (inflight === sync) inflight = undefined;
      },
    );
    return sync;
  };
}

/**
 * Contract: throws `LogAccessError` (`LOG_UNWRITABLE`) when the log's directory or file cannot be created or
 * opened for appending. A new log's file appears with its first line, never empty (ADR 0087).
 */
export function createJsonlStore(path: string, opts: JsonlStoreOptions = {}): LogStore {
  const file = openLogFile(opts.fs ?? nodeFs, path);
  const flush = groupFlush(file, opts.rounds ?? jsonlRounds);
  let closed = false;
  return {
    location: path,
    append(_entry: Entry, line: string) {
      if (closed) throw new Error(`log store ${path} is closed`);
      appendLine(file, line);
    },
    flush() {
      return closed ? Promise.resolve() : flush();
    },
    async close() {
      if (closed) return;
      try {
        await this.flush();
      } finally {
        closed = true;
        file.fs.closeSync(file.fd);
        dropAside(file);
      }
    },
  };
}

export const JsonlConfig = z.strictObject({
  /** Where the logs go; default `$BRIDLE_HOME/sessions`. */
  dir: z.string().min(1).optional(),
});
export type JsonlConfig = z.infer<typeof JsonlConfig>;

/** The `jsonl` provider of the store seam: one file per session, `<dir>/<id>.jsonl`. */
export const jsonlStore = defineProvider({
  seam: STORE,
  name: 'jsonl',
  config: JsonlConfig,
  inject: [SESSION],
  create(c, services): SessionStore {
    const dir = c.dir ?? join(services.get(SESSION).bridleHome, 'sessions');
    const pathOf = (id: string) => join(dir, `${id}.jsonl`);
    return {
      id: 'jsonl',
      location: dir,
      locate: pathOf,
      open(id, o = {}): OpenedLog {
        const path = pathOf(id);
        // A repair's open cuts a torn tail off first, under the claim the caller holds and keeps: the next line starts a line of its own.
        if (o.repair && o.lock) {
          if (nodeFs.existsSync(path)) mendTail(path);
          return Object.assign(createJsonlStore(path), { lock: o.lock });
        }
        // The store first (it makes the log's directories, and fsyncs them at its first flush), then the lock.
        const store = createJsonlStore(path);
        let lock: WriterLock;
        try {
          lock = o.lock ?? acquireJsonlLock(path);
        } catch (err) {
          void store.close().catch(() => undefined);
          removeIfEmpty(path);
          throw err;
        }
        return Object.assign(withWriterLock(store, lock), { lock });
      },
      claim: async (id) => acquireJsonlLock(pathOf(id)),
      async tail(id, fromSeq = 1) {
        const path = pathOf(id);
        if (!nodeFs.existsSync(path)) return undefined;
        // Gapless from seq 1 (docs/design.md §3): line n holds seq n.
        return readLogLines(path).slice(Math.max(0, fromSeq - 1));
      },
      async read(id) {
        const path = pathOf(id);
        return nodeFs.existsSync(path) ? readStoredLog(path) : undefined;
      },
      list: async () => listJsonl(dir),
      forks: async (id) => forksIn(dir, id),
      async delete(id) {
        const path = pathOf(id);
        if (!nodeFs.existsSync(path)) return false;
        // The claim first (it throws SessionLockedError while a live writer holds it): nobody appends to a log being removed.
        const lock = acquireJsonlLock(path);
        try {
          nodeFs.unlinkSync(path);
        } finally {
          lock.release();
        }
        return true;
      },
    };
  },
});

/** A new log nothing was written to is not left behind by an open that failed. */
function removeIfEmpty(path: string): void {
  try {
    if (nodeFs.statSync(path).size === 0) nodeFs.unlinkSync(path);
  } catch {}
}
