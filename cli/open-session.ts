/**
 * Opens a session for a CLI command (`run`, `chat`, `resume`, `serve`, `acp`) from
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
import { LogAccessError, LogAppendError, LogFormatError } from '../log/errors.js';
import type { OpenedLog, SessionStore, WriterLock } from '../ports/store.js';
import type { Answerer } from '../ports/approval.js';
import { MODEL, SANDBOX, TOOLS } from '../ports/index.js';
import type { ComposedRow } from '../plugins/rows.js';
import { createSession, type BridleSession, type SessionOptions } from '../runtime/session.js';
import { SessionNotSavedError, UsageError } from './errors.js';
import { logAccessAsUsage, sessionPath } from './home.js';
import type { ToolLookup } from './render.js';
import { parseStoredLines, targetOf } from './session-store.js';
import type { Product } from './settings.js';
import { applySettings, type Settings } from '../runtime/settings.js';
import { loggedPolicy, loggedWorkspace, PolicyWidenedError, WorkspaceChangedError } from '../runtime/session-policy.js';
import { resumableTurn } from '../log/resumable.js';
import { restoreSessionSnapshot } from '../machines/session-fold.js';
import { preflightSession } from '../runtime/session-preflight.js';

/**
 * Going on with a session, its logged policy takes the place of what bundles, profiles and the config file say;
 * only a flag changes it (ADR 0027), and `createSession` refuses a flag that widens it. Contract: pure; rows as
 * given for a log that logged no policy.
 */
export function keepLoggedPolicy(rows: ComposedRow[], existing: readonly Entry[], flagged: Settings): ComposedRow[] {
  const logged = loggedPolicy(existing);
  if (!logged) return rows;
  const s: Settings = {};
  if (flagged.approval === undefined) s.approval = logged.approval;
  if (flagged.allow === undefined) s.allow = logged.allow.map((r) => `${r.tool}:${r.pattern}`);
  const known = logged.sandbox === 'bwrap' || logged.sandbox === 'off';
  if (flagged.sandbox === undefined && known) s.sandbox = logged.sandbox as 'bwrap' | 'off';
  // A confining sandbox's reach as logged; an unconfined one logged no mode of its own to keep.
  if (logged.sandbox !== 'off') {
    if (flagged.sandboxMode === undefined) s.sandboxMode = logged.mode;
    if (flagged.allowNetwork === undefined) s.allowNetwork = logged.network;
  }
  return applySettings(rows, [{ from: 'log', settings: s }]).rows;
}

/**
 * What `openSession` would refuse going on with a session for — its logged policy widened by this process's
 * flags, a model (or approval, sandbox) row that cannot be built here — from its entries as read without its
 * claim, so a server that cannot run a session leaves its lease alone (ADR 0042). Contract: throws
 * `PolicyWidenedError` or a `CompositionError`; writes nothing and claims nothing.
 */
export function preflightContinued(product: Product, cwd: string, existing: readonly Entry[]): void {
  preflightSession({
    cwd,
    bridleHome: product.home,
    rows: keepLoggedPolicy(product.rows, existing, product.flagged),
    existing,
    ...(product.loaded ? { loaded: product.loaded } : {}),
    ...(product.overridePolicy ? { overridePolicy: true } : {}),
    ...(product.moveWorkspace ? { moveWorkspace: true } : {}),
  });
}

export interface OpenOptions {
  product: Product;
  cwd?: string;
  session?: string;
  answerer?: Answerer;
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
  /** Plugins the host mounts after the rows (the ACP agent: the client's files and terminals as a service). */
  plugins?: SessionOptions['plugins'];
  /** A new session that is a subagent of a parent elsewhere (`bridle serve` driven by the `process` provider): its id, depth, parent. */
  lineage?: { id?: string; depth: number; parent: string | null };
  /** With `lock`: the store that issued it (a Postgres lease is good only in the store that took it). */
  store?: SessionStore;
}

const isOpen = (entries: readonly Entry[]) => entries.filter((e) => e.kind === 'turn/start').length !== entries.filter((e) => e.kind === 'turn/end').length;

/** A new session's id names a log that exists already: a second writer would append to someone else's log. */
export class SessionExistsError extends Error {
  override name = 'SessionExistsError';
  readonly code = 'SESSION_EXISTS';
}

export interface OpenedSession {
  /** Created, not started: subscribe to it, then `start()` (ADR 0051). */
  session: BridleSession;
  /**
   * Starts the session, its first append's failure said as `openSession`'s are (`SessionNotSavedError`, exit 1),
   * and the lock it took released. Contract: call once, after subscribing.
   */
  start(): BridleSession;
  logPath: string;
  /** How many entries the log held before this process opened it. */
  priorEntries: number;
  /** The session's tools, live: an MCP server's arrive once it has started. */
  tools: ToolLookup;
  /** Set for a scripted model: shown wherever its output appears. */
  scriptedLabel?: string;
  workspace: string;
  /** One line saying what the sandbox enforces (or that there is none). */
  sandboxLine: string;
}

/** A continued session asked to run in another workspace than its log's, without `--move-workspace` (exit 2; ACP: `WORKSPACE_CHANGED`). */
export class WorkspaceChangedUsageError extends UsageError {
  readonly code = 'WORKSPACE_CHANGED';
}

/**
 * Where a continued session runs: the `--cwd` given (which `createSession` compares with the log's), else
 * the workspace its log says it runs in (ADR 0041), not the shell's directory.
 */
function continuedWorkspace(cwd: string | undefined, given: string | undefined, existing: readonly Entry[]): string {
  if (cwd !== undefined) return given!;
  const logged = loggedWorkspace(existing);
  if (logged === undefined) return resolveWorkspace(undefined);
  let real: string;
  try {
    real = realpathSync(logged);
  } catch {
    throw new UsageError(`the session's workspace ${logged} (from its log) no longer exists; pass --cwd DIR --move-workspace to run it in another, which is logged`);
  }
  if (!statSync(real).isDirectory()) throw new UsageError(`the session's workspace ${logged} (from its log) is no longer a directory; pass --cwd DIR --move-workspace to run it in another`);
  return real;
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
 * cannot run here (no key). A session in Postgres is opened under its lease (ADR 0025): a new one's is
 * taken before this resolves, so a database out of reach (`StoreUnavailableError`, exit 1) or a held
 * session is said before anything runs.
 */
export async function openSession(o: OpenOptions): Promise<OpenedSession> {
  const rows = o.rows ? o.rows(o.product.rows) : o.product.rows;
  const target = o.session !== undefined ? targetOf(rows, o.product.home, o.session) : undefined;
  if (target?.kind === 'postgres' || (!target && rows.find((r) => r.id === 'store')?.use === 'postgres')) return openStoredSession(o, rows, target?.kind === 'postgres' ? target : undefined);
  return openFileSession(o, rows, target?.kind === 'jsonl' ? target.path : undefined);
}

function openFileSession(o: OpenOptions, given: ComposedRow[], path: string | undefined): OpenedSession {
  // Checked before the log is touched; a continued session without `--cwd` runs where its log says.
  const named = o.cwd !== undefined || o.session === undefined ? resolveWorkspace(o.cwd) : undefined;
  let workspace = named ?? '';
  let rows = given;
  let existing: Entry[] = [];
  let id: string | undefined = o.session ? undefined : o.id;
  let lock = o.lock;
  let logPath: string | undefined;
  if (o.session !== undefined && path !== undefined) {
    logPath = path;
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
      // A turn left waiting on an approval, or answered and not dispatched (a fork's new answer), is gone on with (ADR 0027, 0031); any other open turn is repair's.
      if (isOpen(existing) && !resumableTurn(existing)) throw new UsageError(`${logPath}: the last turn never ended (a crash?); run \`bridle resume ${o.session}\` to repair it first`);
      workspace = continuedWorkspace(o.cwd, named, existing);
    } catch (err) {
      if (!o.lock) lock.release();
      throw err;
    }
    rows = keepLoggedPolicy(rows, existing, o.product.flagged);
    // A log named by path lives where it lives: the JSONL store goes on writing it there.
    rows = rows.map((r) => (r.id === 'store' && r.use === 'jsonl' ? { ...r, config: { ...(r.config as object), dir: dirname(logPath!) }, from: 'flag' } : r));
  }
  if (!o.session && o.lineage?.id) {
    id = o.lineage.id;
    const home = o.product.home;
    if (existsSync(sessionPath(home, id))) throw new SessionExistsError(`a session ${id} exists already (${sessionPath(home, id)}); a new session needs an id of its own`);
  }
  return startSession(o, { workspace, rows, existing, ...(id ? { id } : {}), ...(lock ? { lock } : {}) });
}

/** A session of the Postgres store: the lease before the read, as the JSONL lock; a new session's lease taken in the background and awaited here. */
async function openStoredSession(o: OpenOptions, rows: ComposedRow[], target: { store: SessionStore; id: string } | undefined): Promise<OpenedSession> {
  const named = o.cwd !== undefined || !target ? resolveWorkspace(o.cwd) : undefined;
  let workspace = named ?? '';
  if (!target) {
    const opened = startSession(o, { workspace, rows, existing: [], ...(!o.session && o.lineage?.id ? { id: o.lineage.id } : {}) });
    const log = opened.session.recorder.store as OpenedLog;
    try {
      await log.ready;
    } catch (err) {
      // Nothing ran and nothing was saved: the open is undone, and the claim's failure is the one said.
      await opened.session.close().catch(() => undefined);
      throw err;
    }
    return opened;
  }
  const store = o.store ?? target.store;
  let lock = o.lock;
  let existing = o.existing;
  lock ??= await store.claim!(target.id);
  // `postgres://host/db#id`, without a password: what `resume` and `replay` take back.
  const where = lock.location;
  try {
    if (!existing) {
      const lines = await store.tail!(target.id);
      if (!lines || lines.length === 0) throw new UsageError(`no session ${target.id} at ${where}`);
      const read = parseStoredLines(lines);
      if (!read.ok) throw new UsageError(`${where} is corrupt (${read.violations[0]!.violation}): ${read.violations[0]!.message}`);
      existing = read.entries;
    }
    const start = existing[0];
    if (start?.kind !== 'session/start') throw new UsageError(`${where}: does not begin with session/start`);
    if (isOpen(existing) && !resumableTurn(existing)) throw new UsageError(`${where}: the last turn never ended (a crash?); run \`bridle resume ${where}\` to repair it first`);
    workspace = continuedWorkspace(o.cwd, named, existing);
  } catch (err) {
    if (!o.lock) lock.release();
    throw err;
  }
  return startSession({ ...o, store }, { workspace, rows: keepLoggedPolicy(rows, existing, o.product.flagged), existing, id: (existing[0] as { id: string }).id, lock });
}

/** A log whose last turn is gone on with, opened without a snapshot (`run --session`): the session as it stood before that turn, as resume restores it. */
function resumedSnapshot(existing: readonly Entry[], rows: readonly ComposedRow[]): { snapshot?: SessionOptions['snapshot'] } {
  if (!isOpen(existing)) return {};
  const maxSteps = (rows.find((r) => r.id === 'turn')?.config as { maxSteps?: number } | undefined)?.maxSteps;
  return { snapshot: restoreSessionSnapshot(existing, maxSteps !== undefined ? { maxSteps } : {}) };
}

function startSession(o: OpenOptions, s: { workspace: string; rows: ComposedRow[]; existing: Entry[]; id?: string; lock?: WriterLock }): OpenedSession {
  const { workspace, rows, existing, id, lock } = s;
  const home = o.product.home;
  const start = existing[0];
  let session: BridleSession;
  try {
    session = createSession({
      ...(o.store ? { services: { store: o.store } } : {}),
      cwd: workspace,
      bridleHome: home,
      ...(id ? { id } : {}),
      rows,
      loaded: o.product.loaded,
      depth: start?.kind === 'session/start' ? start.depth : (o.lineage?.depth ?? 0),
      ...(!o.session && o.lineage ? { parent: o.lineage.parent } : {}),
      existing,
      ...(lock ? { lock, lockLogged: o.lock !== undefined } : {}),
      ...(o.snapshot ? { snapshot: o.snapshot } : resumedSnapshot(existing, rows)),
      ...(o.answerer ? { answerer: o.answerer } : {}),
      ...(o.inspect ? { inspect: o.inspect } : {}),
      ...(o.plugins ? { plugins: o.plugins } : {}),
      ...(o.product.overridePolicy ? { overridePolicy: true } : {}),
      ...(o.product.moveWorkspace ? { moveWorkspace: true } : {}),
    });
  } catch (err) {
    openFailure(err, o, lock);
  }
  const model = session.host.get(MODEL);
  const sandbox = session.host.get(SANDBOX);
  return {
    session,
    start: () => {
      try {
        return session.start();
      } catch (err) {
        openFailure(err, o, lock);
      }
    },
    logPath: session.recorder.store.location,
    priorEntries: existing.length,
    tools: session.host.get(TOOLS),
    ...(model.label ? { scriptedLabel: model.label } : {}),
    workspace,
    sandboxLine: sandbox.provider.describe(sandbox.policy),
  };
}

/** A failure to open or start the session, said in one line; the lock this open took is released. */
function openFailure(err: unknown, o: OpenOptions, lock: WriterLock | undefined): never {
  if (lock && !o.lock) lock.release();
  // One line naming the logged and the requested policy; nothing was written (exit 2).
  if (err instanceof PolicyWidenedError) throw new UsageError(err.message, { cause: err });
  // The same for a workspace other than the logged one, naming both paths (ADR 0041).
  if (err instanceof WorkspaceChangedError) throw new WorkspaceChangedUsageError(err.message, { cause: err });
  // The disk refused the session's first entry (full, read-only): a problem outside bridle, said in one line.
  if (err instanceof LogAppendError && err.code === 'LOG_APPEND_FAILED') throw new SessionNotSavedError(`the session could not be saved (${err.code}: ${err.message})`);
  if (err instanceof LogAccessError) accessFailure(err);
  if (err instanceof LogFormatError) throw new UsageError(`${o.session ?? 'the session log'}: ${err.message}`);
  throw err;
}

/** A disk that is full or failing is not a usage mistake: the session could not be saved (exit 1); anything else as `logAccessAsUsage`. */
function accessFailure(err: unknown): never {
  if (err instanceof LogAccessError && ['ENOSPC', 'EDQUOT', 'EIO'].includes(err.sysCode ?? '')) throw new SessionNotSavedError(`the session could not be saved (${err.sysCode}): ${err.message}`);
  logAccessAsUsage(err);
}
