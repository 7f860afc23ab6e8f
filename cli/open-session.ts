/**
 * Opens a session for a CLI command (`run`, `chat`, `resume`, `serve`) from
 * the product the command composed (`cli/settings.ts`): the workspace, the
 * log (new, or the one `--session` names), and the host's duties (the
 * answerer, live display). The session itself is built by `createSession`
 * from the product's rows; nothing here assembles its parts.
 */
import { closeSync, existsSync, realpathSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { acquireJsonlLock } from '../adapters/store/jsonl-lock.js';
import { openLogForReading } from '../adapters/store/jsonl-read.js';
import { readLogFile } from '../adapters/store/jsonl-repair.js';
import type { Entry } from '../log/entries.js';
import { LogAccessError, LogAppendError } from '../log/errors.js';
import type { WriterLock } from '../ports/store.js';
import type { Answerer } from '../ports/approval.js';
import { MODEL, SANDBOX, TOOLS } from '../ports/index.js';
import type { ToolDefinition } from '../ports/tools.js';
import type { ComposedRow } from '../plugins/rows.js';
import { createSession, type BridleSession, type SessionOptions } from '../runtime/session.js';
import { SessionNotSavedError, UsageError } from './errors.js';
import { logAccessAsUsage, sessionPath } from './home.js';
import type { Product } from './settings.js';

export interface OpenOptions {
  product: Product;
  cwd?: string;
  session?: string;
  answerer?: Answerer;
  onChunk?: SessionOptions['onChunk'];
  onEntry?: SessionOptions['onEntry'];
  inspect?: SessionOptions['inspect'];
  /** A new session's id (`bridle eval` names each run's); default: a fresh one from the `ids` row. Not with `session`. */
  id?: string;
  /** With `session`: the log's entries, already read and repaired (resume), instead of reading the file here. */
  existing?: Entry[];
  /** A persisted session snapshot to start from (resume). */
  snapshot?: SessionOptions['snapshot'];
  /** Rows this opener changes on top of the product (the server: a client's model and cwd). */
  rows?: (rows: ComposedRow[]) => ComposedRow[];
  /**
   * With `session`: the session's writer lock, already held (resume takes it before it repairs, and has logged
   * any takeover); closing the session releases it. Without it, the lock is taken here (`--session`) or by the
   * store when it opens a new log.
   */
  lock?: WriterLock;
}

export interface OpenedSession {
  session: BridleSession;
  logPath: string;
  /** How many entries the log held before this process opened it. */
  priorEntries: number;
  tools: ReadonlyMap<string, ToolDefinition>;
  /** Set for a scripted model: shown wherever its output appears. */
  scriptedLabel?: string;
  workspace: string;
  /** One line saying what the sandbox enforces (or that there is none). */
  sandboxLine: string;
}

export function resolveWorkspace(cwd: string | undefined): string {
  const dir = cwd ?? process.cwd();
  let real: string;
  try {
    real = realpathSync(dir);
  } catch {
    throw new UsageError(`--cwd: no such directory: ${dir}`);
  }
  if (!statSync(real).isDirectory()) throw new UsageError(`--cwd: not a directory: ${dir}`);
  return real;
}

/** The log's entries, read line by line; a log that is not one, or not whole, is a usage error naming it. */
export function readExisting(path: string): Entry[] {
  if (!existsSync(path)) throw new UsageError(`no session log at ${path}`);
  let read: ReturnType<typeof readLogFile>;
  try {
    read = readLogFile(path);
  } catch (err) {
    logAccessAsUsage(err);
  }
  if (!read.ok) {
    const v = read.violations[0]!;
    throw new UsageError(`${path} is corrupt (${v.violation}): ${v.message}`);
  }
  if (read.torn) throw new UsageError(`${path}: torn last line (line ${read.torn.line}); run \`bridle resume\` to repair it`);
  return read.entries;
}

/**
 * Contract: the session is open for writing under its writer lock — a second writer is refused with
 * `SessionLockedError` naming the holder — and every failure after the lock was taken releases it.
 * Throws `UsageError` (exit 2) for a bad workspace or log, `SessionNotSavedError` (exit 1) for a disk
 * that refuses the log, and a `CompositionError` whose cause is a `ProviderSetupError` for a model that
 * cannot run here (no key).
 */
export function openSession(o: OpenOptions): OpenedSession {
  const workspace = resolveWorkspace(o.cwd);
  const home = o.product.home;
  let rows = o.rows ? o.rows(o.product.rows) : o.product.rows;
  let existing: Entry[] = [];
  let id: string | undefined = o.session ? undefined : o.id;
  let lock = o.lock;
  let logPath: string | undefined;
  if (o.session) {
    logPath = sessionPath(home, o.session);
    if (!existsSync(logPath)) throw new UsageError(`no session log at ${logPath}`);
    // Only a regular file is a log: a directory or a FIFO is refused before anything opens it for writing (which would block on a FIFO).
    try {
      closeSync(openLogForReading(logPath));
    } catch (err) {
      accessFailure(err);
    }
    // The lock before the read: nothing another writer appends can be missed.
    try {
      lock ??= acquireJsonlLock(logPath);
    } catch (err) {
      accessFailure(err);
    }
    try {
      existing = o.existing ?? readExisting(logPath);
      const start = existing[0];
      if (start?.kind !== 'session/start') throw new UsageError(`${logPath}: does not begin with session/start`);
      id = start.id;
      const open = existing.filter((e) => e.kind === 'turn/start').length - existing.filter((e) => e.kind === 'turn/end').length;
      if (open !== 0) throw new UsageError(`${logPath}: the last turn never ended (a crash?); run \`bridle resume ${o.session}\` to repair it first`);
    } catch (err) {
      if (!o.lock) lock.release();
      throw err;
    }
    // A log named by path lives where it lives: the JSONL store goes on writing it there.
    rows = rows.map((r) => (r.id === 'store' && r.use === 'jsonl' ? { ...r, config: { ...(r.config as object), dir: dirname(logPath!) }, from: 'flag' } : r));
  }
  const start = existing[0];
  let session: BridleSession;
  try {
    session = createSession({
      cwd: workspace,
      bridleHome: home,
      ...(id ? { id } : {}),
      rows,
      loaded: o.product.loaded,
      depth: start?.kind === 'session/start' ? start.depth : 0,
      existing,
      ...(lock ? { lock, lockLogged: o.lock !== undefined } : {}),
      ...(o.snapshot ? { snapshot: o.snapshot } : {}),
      ...(o.answerer ? { answerer: o.answerer } : {}),
      ...(o.onChunk ? { onChunk: o.onChunk } : {}),
      ...(o.onEntry ? { onEntry: o.onEntry } : {}),
      ...(o.inspect ? { inspect: o.inspect } : {}),
    });
  } catch (err) {
    if (lock && !o.lock) lock.release();
    // The disk refused the session's first entry (full, read-only): a problem outside bridle, said in one line.
    if (err instanceof LogAppendError && err.code === 'LOG_APPEND_FAILED') throw new SessionNotSavedError(`the session could not be saved (${err.code}: ${err.message})`);
    if (err instanceof LogAccessError) accessFailure(err);
    throw err;
  }
  const model = session.host.get(MODEL);
  const sandbox = session.host.get(SANDBOX);
  return {
    session,
    logPath: session.recorder.store.location,
    priorEntries: existing.length,
    tools: new Map(session.host.get(TOOLS).list().map((t) => [t.name, t])),
    ...(model.label ? { scriptedLabel: model.label } : {}),
    workspace,
    sandboxLine: sandbox.provider.describe(sandbox.policy),
  };
}

/** A disk that is full or failing is not a usage mistake: the session could not be saved (exit 1); anything else as `logAccessAsUsage`. */
function accessFailure(err: unknown): never {
  if (err instanceof LogAccessError && ['ENOSPC', 'EDQUOT', 'EIO'].includes(err.sysCode ?? '')) throw new SessionNotSavedError(`the session could not be saved (${err.sysCode}): ${err.message}`);
  logAccessAsUsage(err);
}
