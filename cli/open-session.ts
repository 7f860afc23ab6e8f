/**
 * Opens a session for a CLI command (`run`, `chat`, `resume`, `serve`, `acp`) from
 * the product the command composed (`cli/settings.ts`): the workspace, the
 * log (new, or the one `--session` names), and the host's duties (the
 * answerer, live display). The session itself is built by `createSession`
 * from the product's rows; nothing here assembles its parts.
 */
import { realpathSync, statSync } from 'node:fs';
import { parseTraceparent } from '../log/trace.js';
import { hostPlugins } from '../runtime/catalogue.js';
import { bridleVersion } from './version.js';
import { visible } from './visible.js';
import type { Entry } from '../log/entries.js';
import { LogAccessError, LogAppendError, LogFormatError, LogAppendCode } from '../log/errors.js';
import type { OpenedLog, SessionStore, WriterLock } from '../ports/store.js';
import type { Answerer } from '../ports/approval.js';
import { MODEL, SANDBOX, TOOLS } from '../ports/index.js';
import type { ComposedRow } from '../plugins/rows.js';
import { createSession } from '../runtime/session.js';
import type { BridleSession } from '../runtime/bridle-session.js';
import type { SessionOptions } from '../runtime/session-options.js';
import { claimToGoOn, SessionLogError } from '../runtime/logs/open.js';
import { sessionOfRef, storeOfRows } from '../runtime/stores.js';
import { LoopChangedError, SessionNotSavedError, UsageError } from './errors.js';
import { loopChange, productLoop } from '../runtime/loop-identity.js';
import { logAccessAsUsage } from './home.js';
import type { ToolLookup } from '../tools/present.js';
import { refuseWorkspaceModules, type Product } from './settings.js';
import { applySettings, type Settings } from '../runtime/settings.js';
import { loggedPolicy, loggedWorkspace, PolicyWidenedError, WorkspaceChangedError } from '../runtime/session-policy.js';
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
 * A stored session goes on in the loop its `session/start` names, or not at all (ADR 0088, 0096): the check
 * `bridle resume` makes, made for every host that continues a session by id. Contract: pure; throws
 * `LoopChangedError` (`LOOP_MISMATCH`, `LOOP_UNAVAILABLE`) when these rows' loop is not the log's; returns for
 * a log without a `session/start` (a new session).
 */
export function refuseLoopChange(rows: readonly ComposedRow[], loaded: Product['loaded'], existing: readonly Entry[]): void {
  const start = existing[0];
  if (start?.kind !== 'session/start') return;
  const changed = loopChange(start.loop, productLoop(rows, loaded)?.identity);
  if (changed) throw new LoopChangedError(changed.code, `session ${start.id}: ${changed.message}; go on with it under the product that ran it (its --profile or --patch)`);
}

/**
 * What `openSession` would refuse going on with a session for — its logged policy widened by this process's
 * flags, a model (or approval, sandbox) row that cannot be built here — from its entries as read without its
 * claim, so a server that cannot run a session leaves its lease alone (ADR 0042). Contract: throws
 * `LoopChangedError`, `PolicyWidenedError` or a `CompositionError`; writes nothing and claims nothing.
 */
export function preflightContinued(product: Product, cwd: string, existing: readonly Entry[]): void {
  refuseLoopChange(product.rows, product.loaded, existing);
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
  /** A spent budget asks `answerer` whether to go on (chat, serve, acp); else the turn ends BUDGET_EXHAUSTED (ADR 0047). */
  askOnBudget?: boolean;
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
  /** A new session's W3C trace context (a `session/create` parameter, ACP `_meta`); else `TRACEPARENT` (ADR 0055). */
  traceparent?: string;
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

/**
 * Contract: the session is open for writing under its writer's claim — a second writer is refused with
 * `SessionLockedError` naming the holder — and every failure after the claim was taken releases it.
 * Throws `UsageError` (exit 2) for a bad workspace or log, `SessionNotSavedError` (exit 1) for a disk
 * that refuses the log, and a `CompositionError` whose cause is a `ProviderSetupError` for a model that
 * cannot run here (no key). A continued session is opened the same way for every store
 * (`runtime/logs/open.ts`: the claim before the read); a new one's claim, where the store takes it in the
 * background (a Postgres lease, ADR 0025), is awaited before this resolves, so a database out of reach
 * (`StoreUnavailableError`, exit 1) or a held session is said before anything runs.
 */
export async function openSession(o: OpenOptions): Promise<OpenedSession> {
  const rows = o.rows ? o.rows(o.product.rows) : o.product.rows;
  return o.session !== undefined ? openContinued(o, rows, o.session) : openNew(o, rows);
}

async function openNew(o: OpenOptions, rows: ComposedRow[]): Promise<OpenedSession> {
  const workspace = resolveWorkspace(o.cwd);
  const id = o.lineage?.id ?? o.id;
  if (o.lineage?.id) {
    const store = o.store ?? storeOfRows(rows, o.product.home);
    if ((await store.tail(o.lineage.id, Number.MAX_SAFE_INTEGER)) !== undefined) {
      throw new SessionExistsError(`a session ${o.lineage.id} exists already (${store.locate(o.lineage.id)}); a new session needs an id of its own`);
    }
  }
  const opened = startSession(o, { workspace, rows, existing: [], ...(id ? { id } : {}) });
  const log = opened.session.recorder.store as OpenedLog;
  try {
    // A store whose claim is taken in the background: a held session or a store out of reach is said now, before anything runs.
    if (log.ready) await log.ready;
  } catch (err) {
    // Nothing ran and nothing was saved: the open is undone, and the claim's failure is the one said.
    await opened.session.close().catch(() => undefined);
    throw err;
  }
  return opened;
}

/** A stored session gone on with: the claim before the read, for every store; the session then writes through the same store. */
async function openContinued(o: OpenOptions, rows: ComposedRow[], ref: string): Promise<OpenedSession> {
  // Checked before the log is touched; a continued session without `--cwd` runs where its log says.
  const named = o.cwd !== undefined ? resolveWorkspace(o.cwd) : undefined;
  const found = sessionOfRef(rows, o.product.home, ref);
  // A claim is good only in the store that issued it (a Postgres lease): the session goes on in that one.
  const store = o.store ?? found.store;
  let claimed: Awaited<ReturnType<typeof claimToGoOn>>;
  try {
    claimed = await claimToGoOn(store, found.id, { lock: o.lock, existing: o.existing });
  } catch (err) {
    if (err instanceof SessionLogError) throw new UsageError(err.message, { cause: err });
    accessFailure(err);
  }
  const { lock, entries } = claimed;
  let workspace: string;
  try {
    workspace = continuedWorkspace(o.cwd, named, entries);
  } catch (err) {
    if (!o.lock) lock.release();
    throw err;
  }
  return startSession({ ...o, store }, { workspace, rows: keepLoggedPolicy(rows, entries, o.product.flagged), existing: entries, id: (entries[0] as { id: string }).id, lock });
}

/** A log whose last turn is gone on with, opened without a snapshot (`run --session`): the session as it stood before that turn, as resume restores it. */
function resumedSnapshot(existing: readonly Entry[], rows: readonly ComposedRow[]): { snapshot?: SessionOptions['snapshot'] } {
  if (!isOpen(existing)) return {};
  const maxSteps = (rows.find((r) => r.id === 'turn')?.config as { maxSteps?: number } | undefined)?.maxSteps;
  return { snapshot: restoreSessionSnapshot(existing, maxSteps !== undefined ? { maxSteps } : {}) };
}

/** The opener's plugins, and the live traces' when the standard OpenTelemetry variables name a collector (ADR 0055). */
function pluginsOf(o: OpenOptions): { plugins?: NonNullable<SessionOptions['plugins']> } {
  const plugins = [...(o.plugins ?? []), ...hostPlugins({ version: bridleVersion(), env: process.env, warn: (l) => process.stderr.write(`bridle: warning: ${visible(l)}\n`) })];
  return plugins.length > 0 ? { plugins } : {};
}

/**
 * The trace context a session hangs under: what its log's `session/start` says for a continued one (it is not
 * asked anew), else the opener's, else the environment's `TRACEPARENT` (the OpenTelemetry convention for
 * processes); a malformed one is left out with one warning.
 */
function traceparentOf(o: OpenOptions, start: Entry | undefined): { traceparent?: string } {
  if (start?.kind === 'session/start') return start.traceparent ? { traceparent: start.traceparent } : {};
  const given = o.traceparent ?? process.env.TRACEPARENT;
  if (given === undefined || given === '') return {};
  if (parseTraceparent(given)) return { traceparent: given.trim() };
  process.stderr.write(`bridle: warning: TRACEPARENT is not a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>); the session's trace is its own\n`);
  return {};
}

function startSession(o: OpenOptions, s: { workspace: string; rows: ComposedRow[]; existing: Entry[]; id?: string; lock?: WriterLock }): OpenedSession {
  const { workspace, rows, existing, id, lock } = s;
  const home = o.product.home;
  const start = existing[0];
  let session: BridleSession;
  try {
    // Every command opens here once the session's workspace is known (`serve`, `acp`, `mcp`, `resume` and `eval`
    // composed, and imported their row modules, before they knew it): a row module inside it is refused (ADR 0087).
    refuseWorkspaceModules(rows, workspace, home);
    // A stored session goes on in the loop it ran (ADR 0088, 0096): `serve`, `acp`, `mcp`, `run --session` alike.
    refuseLoopChange(rows, o.product.loaded, existing);
    session = createSession({
      ...(o.store ? { services: { store: o.store } } : {}),
      cwd: workspace,
      bridleHome: home,
      ...(id ? { id } : {}),
      rows,
      loaded: o.product.loaded,
      depth: start?.kind === 'session/start' ? start.depth : (o.lineage?.depth ?? 0),
      ...(!o.session && o.lineage ? { parent: o.lineage.parent } : {}),
      ...traceparentOf(o, start),
      existing,
      ...(lock ? { lock, lockLogged: o.lock !== undefined } : {}),
      ...(o.snapshot ? { snapshot: o.snapshot } : resumedSnapshot(existing, rows)),
      ...(o.answerer ? { answerer: o.answerer } : {}),
      ...(o.askOnBudget ? { askOnBudget: true } : {}),
      ...(o.inspect ? { inspect: o.inspect } : {}),
      ...pluginsOf(o),
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
  if (err instanceof LogAppendError && err.code === LogAppendCode.LOG_APPEND_FAILED) throw new SessionNotSavedError(`the session could not be saved (${err.code}: ${err.message})`);
  if (err instanceof LogAccessError) accessFailure(err);
  if (err instanceof LogFormatError) throw new UsageError(`${o.session ?? 'the session log'}: ${err.message}`);
  throw err;
}

/** A disk that is full or failing is not a usage mistake: the session could not be saved (exit 1); anything else as `logAccessAsUsage`. */
function accessFailure(err: unknown): never {
  if (err instanceof LogAccessError && ['ENOSPC', 'EDQUOT', 'EIO'].includes(err.sysCode ?? '')) throw new SessionNotSavedError(`the session could not be saved (${err.sysCode}): ${err.message}`);
  logAccessAsUsage(err);
}
