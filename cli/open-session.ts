/**
 * Everything `run`, `resume`, `serve` and the demo share: the workspace, the
 * log file, the model, the tools, the shell, approvals — wired into one session.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, realpathSync, statSync, unlinkSync } from 'node:fs';
import type { Answerer, ApprovalPolicy } from '../safety/approval.js';
import type { Clock } from '../ports/clock.js';
import { createSession, type BridleSession, type SessionOptions } from '../runtime/session.js';
import { createSandboxedShell, resolveSandboxLimits, type SandboxLimits, type SandboxMode, type SandboxPolicy } from '../safety/sandbox.js';
import { readOnlyModePlugin } from '../plugins/guards/read-only-mode.js';
import { createBwrapSandbox } from '../adapters/sandbox/bwrap.js';
import { createLocalShell } from '../adapters/subprocess/local.js';
import { createOffSandbox } from '../adapters/sandbox/off.js';
import { createJsonlStore } from '../adapters/store/jsonl.js';
import { acquireJsonlLock, withWriterLock } from '../adapters/store/jsonl-lock.js';
import type { WriterLock } from '../ports/store.js';
import { LogAccessError, LogAppendError } from '../log/errors.js';
import { readLogFile } from '../adapters/store/jsonl-repair.js';
import { openLogForReading } from '../adapters/store/jsonl-read.js';
import type { ApprovalRule, Entry } from '../log/entries.js';
import { builtinTools } from '../tools/index.js';
import { delegateTool } from '../runtime/subagent.js';
import type { ToolDefinition } from '../ports/tools.js';
import { SessionNotSavedError, UsageError } from './errors.js';
import { bridleHome, defaultBridleHome, logAccessAsUsage, sessionPath, sessionsDir } from './home.js';
import { chooseModel, type ModelChoice } from './model.js';
import { join } from 'node:path';

export interface OpenOptions {
  model?: string;
  baseUrl?: string;
  cwd?: string;
  session?: string;
  approval?: ApprovalPolicy;
  answerer?: Answerer;
  /** Allow rules from `--allow tool:pattern` or config. */
  rules?: ApprovalRule[];
  answerTimeoutMs?: number;
  /** Default `bwrap`: a missing bwrap fails each shell command closed, it never falls back. */
  sandbox?: 'bwrap' | 'off';
  sandboxMode?: SandboxMode;
  allowNetwork?: boolean;
  /** The workspace's `.git` writable by commands and the file tools; default false: read-only to both. */
  allowGitWrites?: boolean;
  /** Default `SANDBOX_LIMIT_DEFAULTS`. */
  sandboxLimits?: SandboxLimits;
  maxSteps?: number;
  /** Deepest subagent allowed (0, the default: no `delegate` tool). */
  maxDepth?: number;
  /** The model's context window in tokens (`--context-window`). */
  contextWindow?: number;
  /** Windows per model id (config `contextWindows`), for when `contextWindow` is not set. */
  contextWindows?: Readonly<Record<string, number>>;
  /** Model stream deadlines in ms (`--stream-idle-ms`, `--stream-total-ms`); default: the provider's. */
  streamIdleMs?: number;
  streamTotalMs?: number;
  onChunk?: SessionOptions['onChunk'];
  inspect?: SessionOptions['inspect'];
  clock?: Clock;
  /** With `session`: the log's entries, already read and repaired (resume), instead of reading the file here. */
  existing?: Entry[];
  /** A persisted session snapshot to start from (resume). */
  snapshot?: SessionOptions['snapshot'];
  /**
   * With `session`: the session's writer lock, already held (resume takes it before it repairs, and has logged
   * any takeover); closing the session releases it. Without it, `openSession` takes the lock itself.
   */
  lock?: WriterLock;
}

export interface OpenedSession {
  session: BridleSession;
  logPath: string;
  /** How many entries the log held before this process opened it. */
  priorEntries: number;
  tools: ReadonlyMap<string, ToolDefinition>;
  model: ModelChoice;
  workspace: string;
  /** One line saying what the sandbox enforces (or that there is none). */
  sandboxLine: string;
}

/** A fresh session id: the time it began, then random bits (outside the log path, so real time and randomness are fine). */
export function newSessionId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${randomBytes(3).toString('hex')}`;
}

/** A child's log, under its own writer lock (released when the child's session closes its store). */
function lockedChildStore(path: string): ReturnType<typeof createJsonlStore> {
  const store = createJsonlStore(path);
  try {
    return withWriterLock(store, acquireJsonlLock(path));
  } catch (err) {
    void store.close().catch(() => undefined);
    throw err;
  }
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

/** The `session/takeover` a writer logs when its lock replaced a stale one (ADR 0016). */
export function takeoverDraft(lock: WriterLock): Extract<import('../log/entries.js').Draft, { kind: 'session/takeover' }>[] {
  if (!lock.tookOver) return [];
  return [{ kind: 'session/takeover', ignorable: true, stale: lock.tookOver, by: { pid: lock.holder.pid, host: lock.holder.host } }];
}

/**
 * Contract: the session is open for writing under its writer lock (a second writer is refused with
 * `SessionLockedError` naming the holder); every failure after the lock was taken releases it.
 */
export function openSession(o: OpenOptions): OpenedSession {
  const workspace = resolveWorkspace(o.cwd);
  const home = bridleHome();
  const model = chooseModel(o);
  const id0 = o.session ? undefined : newSessionId();
  const logPath = o.session ? sessionPath(home, o.session) : join(sessionsDir(home), `${id0}.jsonl`);
  if (o.session && !existsSync(logPath)) throw new UsageError(`no session log at ${logPath}`);
  // Only a regular file is a log: a directory or a FIFO is refused before anything opens it for writing (which would block on a FIFO).
  if (o.session) {
    try {
      closeSync(openLogForReading(logPath));
    } catch (err) {
      logAccessAsUsage(err);
    }
  }
  // The store first (it makes the log's directories, and fsyncs them at its first flush), then the lock, then the read.
  let store: ReturnType<typeof createJsonlStore>;
  try {
    store = createJsonlStore(logPath);
  } catch (err) {
    accessFailure(err);
  }
  let lock: WriterLock;
  try {
    lock = o.lock ?? acquireJsonlLock(logPath);
  } catch (err) {
    void store.close().catch(() => undefined);
    if (!o.session) removeEmpty(logPath);
    accessFailure(err);
  }
  try {
    return openLocked(o, { workspace, home, model, id0, logPath, store: withWriterLock(store, lock), lock });
  } catch (err) {
    lock.release();
    void store.close().catch(() => undefined);
    if (!o.session) removeEmpty(logPath);
    // The disk refused the session's first entry (full, read-only): a problem outside bridle, said in one line.
    if (err instanceof LogAppendError && err.code === 'LOG_APPEND_FAILED') throw new SessionNotSavedError(`the session could not be saved (${err.code}: ${err.message})`);
    throw err;
  }
}

/** A disk that is full or failing is not a usage mistake: the session could not be saved (exit 1); anything else as `logAccessAsUsage`. */
function accessFailure(err: unknown): never {
  if (err instanceof LogAccessError && ['ENOSPC', 'EDQUOT', 'EIO'].includes(err.sysCode ?? '')) throw new SessionNotSavedError(`the session could not be saved (${err.sysCode}): ${err.message}`);
  logAccessAsUsage(err);
}

/** A new log nothing was written to is not left behind by an open that failed. */
function removeEmpty(path: string): void {
  try {
    if (statSync(path).size === 0) unlinkSync(path);
  } catch {}
}

interface Opening {
  workspace: string;
  home: string;
  model: ModelChoice;
  id0: string | undefined;
  logPath: string;
  store: ReturnType<typeof createJsonlStore>;
  lock: WriterLock;
}

function openLocked(o: OpenOptions, { workspace, home, model, id0, logPath, store, lock }: Opening): OpenedSession {
  let existing: Entry[] = [];
  let id: string;
  if (o.session) {
    existing = o.existing ?? readExisting(logPath);
    const start = existing[0];
    if (start?.kind !== 'session/start') throw new UsageError(`${logPath}: does not begin with session/start`);
    id = start.id;
    const open = existing.filter((e) => e.kind === 'turn/start').length - existing.filter((e) => e.kind === 'turn/end').length;
    if (open !== 0) throw new UsageError(`${logPath}: the last turn never ended (a crash?); run \`bridle resume ${o.session}\` to repair it first`);
  } else {
    id = id0!;
  }
  const sandbox = o.sandbox === 'off' ? createOffSandbox() : createBwrapSandbox();
  const sandboxMode = o.sandboxMode ?? 'workspace-write';
  // A writable .git/hooks or core.fsmonitor would run the model's code at the user's next git command.
  const protect = o.allowGitWrites ? [] : [join(workspace, '.git')];
  // The logs' homes are hidden from commands, even when they lie inside the workspace.
  const sandboxPolicy: SandboxPolicy = {
    mode: sandboxMode,
    workspace,
    network: o.allowNetwork === true,
    protect,
    hide: [home, defaultBridleHome()],
    limits: o.sandboxLimits ?? resolveSandboxLimits(),
  };
  const shell = createSandboxedShell(createLocalShell(), sandbox, sandboxPolicy);
  const plugins = sandbox.confines && sandboxMode === 'read-only' ? [readOnlyModePlugin()] : [];
  const depth = existing[0]?.kind === 'session/start' ? existing[0].depth : 0;
  const contextWindow = o.contextWindow ?? (Object.hasOwn(o.contextWindows ?? {}, model.name) ? o.contextWindows![model.name] : undefined);
  const tools = builtinTools();
  if ((o.maxDepth ?? 0) > depth) {
    // Children share the model, the workspace, the sandbox and the clock; each gets its own log beside the parent's.
    tools.push(
      delegateTool({
        maxDepth: o.maxDepth!,
        parent: () => ({ id, depth, recorder: session.recorder }),
        base: (childId) => ({
          cwd: workspace,
          bridleHome: home,
          protect,
          model: model.provider,
          modelName: model.name,
          store: lockedChildStore(join(sessionsDir(home), `${childId}.jsonl`)),
          clock: o.clock ?? Date.now,
          tools: builtinTools(),
          shell,
          plugins,
          maxSteps: o.maxSteps,
          contextWindow,
        }),
      }),
    );
  }
  const session = createSession({
    id,
    cwd: workspace,
    bridleHome: home,
    protect,
    model: model.provider,
    modelName: model.name,
    store,
    clock: o.clock ?? Date.now,
    tools,
    shell,
    approval: o.approval ?? 'ask',
    answerer: o.answerer,
    approvalRules: o.rules,
    answerTimeoutMs: o.answerTimeoutMs,
    plugins,
    depth,
    maxSteps: o.maxSteps,
    contextWindow,
    onChunk: o.onChunk,
    inspect: o.inspect,
    existing,
    snapshot: o.snapshot,
  });
  // A lock this open took over from a writer that is gone is said in the log (resume's repair has said it already).
  if (!o.lock) for (const d of takeoverDraft(lock)) session.recorder.append(d);
  return { session, logPath, priorEntries: existing.length, tools: new Map(tools.map((t) => [t.name, t])), model, workspace, sandboxLine: sandbox.describe(sandboxPolicy) };
}
