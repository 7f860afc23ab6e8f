/**
 * Everything `run`, `resume`, `serve` and the demo share: the workspace, the
 * log file, the model, the tools, the file system and the (sandboxed) subprocess, approvals — wired into one session.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, realpathSync, statSync } from 'node:fs';
import type { Answerer, ApprovalPolicy } from '../ports/approval.js';
import type { Clock } from '../ports/clock.js';
import { createSession, type BridleSession, type SessionOptions } from '../runtime/session.js';
import { resolveSandboxLimits, type SandboxLimits, type SandboxMode, type SandboxPolicy } from '../safety/sandbox.js';
import { readOnlyModePlugin } from '../plugins/guards/read-only-mode.js';
import { createBwrapSandbox } from '../adapters/sandbox/bwrap.js';
import { createLocalFs } from '../adapters/fs/local.js';
import { createLocalSubprocess } from '../adapters/subprocess/local.js';
import { createOffSandbox } from '../adapters/sandbox/off.js';
import { createJsonlStore } from '../adapters/store/jsonl.js';
import { readLogFile } from '../adapters/store/jsonl-repair.js';
import type { ApprovalRule, Entry } from '../log/entries.js';
import { builtinTools } from '../tools/index.js';
import { delegateTool } from '../runtime/subagent.js';
import type { ToolDefinition } from '../ports/tools.js';
import { UsageError } from './errors.js';
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

export function openSession(o: OpenOptions): OpenedSession {
  const workspace = resolveWorkspace(o.cwd);
  const home = bridleHome();
  const model = chooseModel(o);
  let existing: Entry[] = [];
  let id: string;
  let logPath: string;
  if (o.session) {
    logPath = sessionPath(home, o.session);
    existing = o.existing ?? readExisting(logPath);
    const start = existing[0];
    if (start?.kind !== 'session/start') throw new UsageError(`${logPath}: does not begin with session/start`);
    id = start.id;
    const open = existing.filter((e) => e.kind === 'turn/start').length - existing.filter((e) => e.kind === 'turn/end').length;
    if (open !== 0) throw new UsageError(`${logPath}: the last turn never ended (a crash?); run \`bridle resume ${o.session}\` to repair it first`);
  } else {
    id = newSessionId();
    logPath = join(sessionsDir(home), `${id}.jsonl`);
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
  const subprocess = createLocalSubprocess({ sandbox, policy: sandboxPolicy });
  const fs = createLocalFs({ workspace, bridleHome: home, protect });
  const plugins = sandbox.confines && sandboxMode === 'read-only' ? [readOnlyModePlugin()] : [];
  const depth = existing[0]?.kind === 'session/start' ? existing[0].depth : 0;
  const contextWindow = o.contextWindow ?? (Object.hasOwn(o.contextWindows ?? {}, model.name) ? o.contextWindows![model.name] : undefined);
  const tools = builtinTools();
  if ((o.maxDepth ?? 0) > depth) {
    // Children share the model, the file system, the sandboxed subprocess and the clock; each gets its own log beside the parent's.
    tools.push(
      delegateTool({
        maxDepth: o.maxDepth!,
        parent: () => ({ id, depth, recorder: session.recorder }),
        base: (childId) => ({
          cwd: workspace,
          bridleHome: home,
          fs,
          subprocess,
          model: model.provider,
          modelName: model.name,
          store: createJsonlStore(join(sessionsDir(home), `${childId}.jsonl`)),
          clock: o.clock ?? Date.now,
          tools: builtinTools(),
          plugins,
          maxSteps: o.maxSteps,
          contextWindow,
        }),
      }),
    );
  }
  let store: ReturnType<typeof createJsonlStore>;
  try {
    store = createJsonlStore(logPath);
  } catch (err) {
    logAccessAsUsage(err);
  }
  const session = createSession({
    id,
    cwd: workspace,
    bridleHome: home,
    fs,
    subprocess,
    model: model.provider,
    modelName: model.name,
    store,
    clock: o.clock ?? Date.now,
    tools,
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
  return { session, logPath, priorEntries: existing.length, tools: new Map(tools.map((t) => [t.name, t])), model, workspace, sandboxLine: sandbox.describe(sandboxPolicy) };
}
