/**
 * The session log's entry schemas: one zod schema per kind, the envelope
 * `{ seq, at, kind, ...fields }`, and the types derived from them.
 * A schema is written once here; every reader and writer parses with it.
 */
import { z } from 'zod';

/**
 * The log's format. 2: inputs are entries (`session/input`, `session/cancel`, `session/compact`,
 * `session/end`), consumption links back to them (`from`), repair notes and denials carry structured
 * fields (ADR 0021). Readers read 1 and 2; only format 2 replays through the machines or continues.
 */
export const LOG_FORMAT = 2;
export const LOG_FORMATS = [1, 2] as const;

export const SurfaceOp = z.union([
  z.literal('append'),
  z.strictObject({ op: z.literal('replace'), start: z.int().positive(), end: z.int().positive() }),
]);
export type SurfaceOp = z.infer<typeof SurfaceOp>;

/** `refusal`: the model declined (OpenAI's `refusal` field); the text is what it said, kept and shown as text. */
export const TextBlock = z.strictObject({ type: z.literal('text'), text: z.string(), refusal: z.literal(true).optional() });
export const ReasoningBlock = z.strictObject({ type: z.literal('reasoning'), text: z.string() });
/**
 * A tool call as the model sent it: `arguments` is the raw JSON text, kept byte for byte. `renamedFrom`: the
 * model gave an earlier call of the same answer this id, so this one was renamed (`assembleBlocks`); the
 * renamed `id` is what the log and the next request use.
 */
export const ToolCallBlock = z.strictObject({
  type: z.literal('tool-call'),
  id: z.string(),
  name: z.string(),
  arguments: z.string(),
  renamedFrom: z.string().optional(),
});
export const Block = z.discriminatedUnion('type', [TextBlock, ReasoningBlock, ToolCallBlock]);
export type Block = z.infer<typeof Block>;
export type ToolCallBlock = z.infer<typeof ToolCallBlock>;

export const Usage = z.strictObject({
  inputTokens: z.int().nonnegative(),
  outputTokens: z.int().nonnegative(),
  reasoningTokens: z.int().nonnegative().optional(),
  cachedTokens: z.int().nonnegative().optional(),
});
export type Usage = z.infer<typeof Usage>;

/** The normalized failure codes of I8. */
export const ModelErrorCode = z.enum([
  'AUTH',
  'RATE_LIMIT',
  'CONTEXT_WINDOW_EXCEEDED',
  'BAD_REQUEST',
  'SERVER',
  'TIMEOUT',
  'TRANSPORT',
  'EMPTY_RESPONSE',
  'ABORTED',
  'UNKNOWN',
]);
export type ModelErrorCode = z.infer<typeof ModelErrorCode>;

/** Why the model stopped. `refusal`: it declined, and said so in a refusal-marked text block. */
export const FinishReason = z.enum(['stop', 'tool-calls', 'length', 'content-filter', 'refusal']);
export type FinishReason = z.infer<typeof FinishReason>;

export const Finish = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('ok'), reason: FinishReason }),
  z.strictObject({
    kind: z.literal('error'),
    code: ModelErrorCode,
    message: z.string(),
    status: z.int().optional(),
    retryAfterMs: z.number().nonnegative().optional(),
  }),
  z.strictObject({ kind: z.literal('aborted') }),
]);
export type Finish = z.infer<typeof Finish>;

export const ToolSpec = z.strictObject({
  name: z.string(),
  description: z.string(),
  parameters: z.record(z.string(), z.unknown()),
});
export type ToolSpec = z.infer<typeof ToolSpec>;

export const TurnEndReason = z.enum([
  'completed',
  'aborted',
  'blocked',
  'error',
  'max-tokens',
  'max-steps',
  'interrupted',
]);
export type TurnEndReason = z.infer<typeof TurnEndReason>;

export const StepEndReason = z.enum(['tool-calls', 'stop', 'length', 'error', 'aborted', 'interrupted']);
export type StepEndReason = z.infer<typeof StepEndReason>;

/** Where a model-visible entry came from; the projection renders it so a summary is never mistaken for a tool's output. */
export const Origin = z.enum(['user', 'steer', 'inject', 'summary', 'subagent', 'system', 'resume']);
export type Origin = z.infer<typeof Origin>;

export const ToolResultStatus = z.enum(['ok', 'error', 'rejected', 'denied', 'aborted', 'unknown']);
export type ToolResultStatus = z.infer<typeof ToolResultStatus>;

/**
 * How far the harness vouches for a model-visible entry's content, where it knows: `uncertain` (e.g. a call
 * whose outcome a crash left unknown), `rejected` (e.g. a result a post-execute hook blocked). Absent means
 * nothing to say, which reads like `confirmed`; the projection renders only the other two, so logs without
 * it project exactly as before. (Named `verdict` because `tool/result` already has a `status`.)
 */
export const Verdict = z.enum(['confirmed', 'uncertain', 'rejected']);
export type Verdict = z.infer<typeof Verdict>;

const TurnId = z.string().regex(/^t\d+$/);
const StepId = z.string().regex(/^t\d+\.s\d+$/);
const CallId = z.string().regex(/^t\d+\.s\d+\.c\d+$/);

/** The `seq` of the `session/input` an entry consumed (format 2). */
const From = z.int().positive();

const envelope = {
  seq: z.int().positive(),
  at: z.iso.datetime(),
  /** A reader that does not know this kind may skip it instead of refusing the log. */
  ignorable: z.literal(true).optional(),
};

/**
 * The settings a session was created with that shape what its machines log
 * (step budget, retry policy, context window and compaction), so replay
 * needs nothing but the log (I12). Only the ones set are written; older logs
 * have none.
 */
export const SessionConfig = z.strictObject({
  maxSteps: z.int().positive().optional(),
  retry: z
    .strictObject({ maxRetries: z.int().nonnegative(), baseDelayMs: z.number().nonnegative(), maxDelayMs: z.number().nonnegative(), retryable: z.array(ModelErrorCode) })
    .optional(),
  contextWindow: z.int().positive().optional(),
  compactThreshold: z.number().positive().optional(),
  compaction: z.strictObject({ tailRatio: z.number().positive().optional(), summaryMaxTokens: z.int().positive().optional() }).optional(),
});
export type SessionConfig = z.infer<typeof SessionConfig>;

/**
 * What a session may do without asking, as it was started (ADR 0027): the approval policy, the sandbox provider
 * (`off` confines nothing), what a confined command may reach, and the allow rules. A sandbox that confines nothing is logged
 * as it acts: `mode: 'full'`, `network: true`. `resume` and `run --session` keep it; a widening is refused.
 */
export const SessionPolicy = z.strictObject({
  approval: z.enum(['never', 'ask', 'auto']),
  sandbox: z.string().min(1),
  mode: z.enum(['read-only', 'workspace-write', 'full']),
  network: z.boolean(),
  /** The allow rules it started with (flags, config): calls they match run unasked, whatever the policy. */
  allow: z.array(z.strictObject({ tool: z.string().min(1), pattern: z.string() })),
});
export type SessionPolicy = z.infer<typeof SessionPolicy>;

export const SessionStart = z.strictObject({
  ...envelope,
  kind: z.literal('session/start'),
  id: z.string().min(1),
  cwd: z.string(),
  model: z.string(),
  depth: z.int().nonnegative(),
  parent: z.string().nullable(),
  format: z.literal(LOG_FORMATS),
  config: SessionConfig.optional(),
  /**
   * A fork's header (ADR 0029): the session it was forked from and the last seq of that log it shares; every
   * line after this one up to `seq` is the original's, byte for byte.
   */
  forkOf: z.strictObject({ session: z.string().min(1), seq: z.int().positive() }).optional(),
  /** Optional: logs written before ADR 0027 lack it, and their policy is whatever the flags say. */
  policy: SessionPolicy.optional(),
});

/**
 * A process went on with the session under another policy than the one it had (ADR 0027): a narrowing its
 * flags asked for (`by: 'flags'`), or a widening `--override-policy` allowed (`by: 'override-policy'`). Logged
 * after the reopening, before anything runs; the session's policy is the last such `to`, else `session/start`'s.
 */
export const SessionPolicyChange = z.strictObject({
  ...envelope,
  kind: z.literal('session/policy'),
  from: SessionPolicy,
  to: SessionPolicy,
  by: z.enum(['flags', 'override-policy']),
});

export const TurnStart = z.strictObject({
  ...envelope,
  kind: z.literal('turn/start'),
  turn: TurnId,
  /** The input as claimed, before any pre-step rewrite. */
  input: z.string(),
  /** The `session/input` this turn was started by (format 2). */
  from: From.optional(),
});

export const UserMessage = z.strictObject({
  ...envelope,
  kind: z.literal('user/message'),
  turn: TurnId,
  text: z.string(),
  origin: Origin,
  verdict: Verdict.optional(),
  /** A steer or inject: the `session/input` it delivers (format 2). */
  from: From.optional(),
  surfaceOp: SurfaceOp,
});

export const StepStart = z.strictObject({
  ...envelope,
  kind: z.literal('step/start'),
  turn: TurnId,
  step: StepId,
});

export const RequestHeader = z.strictObject({
  ...envelope,
  kind: z.literal('request/header'),
  turn: TurnId,
  step: StepId,
  system: z.string(),
  tools: z.array(ToolSpec),
  params: z.strictObject({
    model: z.string(),
    temperature: z.number().optional(),
    maxTokens: z.int().positive().optional(),
  }),
});

export const AssistantMessage = z.strictObject({
  ...envelope,
  kind: z.literal('assistant/message'),
  turn: TurnId,
  step: StepId,
  blocks: z.array(Block),
  usage: Usage.optional(),
  finish: Finish,
  interrupted: z.literal(true).optional(),
  surfaceOp: SurfaceOp,
});

export const ModelRetry = z.strictObject({
  ...envelope,
  kind: z.literal('model/retry'),
  turn: TurnId,
  step: StepId,
  attempt: z.int().positive(),
  code: ModelErrorCode,
  message: z.string(),
  delayMs: z.number().nonnegative(),
});

export const ToolCall = z.strictObject({
  ...envelope,
  kind: z.literal('tool/call'),
  turn: TurnId,
  step: StepId,
  callId: CallId,
  /** The id the model gave the call; results carry it back on the wire. */
  toolCallId: z.string(),
  name: z.string(),
  arguments: z.string(),
});

export const ApprovalOutcome = z.enum(['allowed-once', 'allowed-always', 'rejected', 'cancelled', 'unavailable']);
export type ApprovalOutcome = z.infer<typeof ApprovalOutcome>;

export const ApprovalAsked = z.strictObject({
  ...envelope,
  kind: z.literal('approval/asked'),
  turn: TurnId,
  step: StepId,
  callId: CallId,
  name: z.string(),
  reason: z.string(),
});

/** A session-scoped allow rule: the tool, and a regex matched against the call's canonical rendering (bash: the command; file tools: the path). */
export const ApprovalRule = z.strictObject({ tool: z.string().min(1), pattern: z.string() });
export type ApprovalRule = z.infer<typeof ApprovalRule>;

export const ApprovalDecided = z.strictObject({
  ...envelope,
  kind: z.literal('approval/decided'),
  turn: TurnId,
  step: StepId,
  callId: CallId,
  outcome: ApprovalOutcome,
  by: z.string(),
  /** With `allowed-always`: the rule the answer added; rebuilt from the log on resume. */
  rule: ApprovalRule.optional(),
});

export const ToolDispatch = z.strictObject({
  ...envelope,
  kind: z.literal('tool/dispatch'),
  turn: TurnId,
  step: StepId,
  callId: CallId,
  name: z.string(),
  idempotent: z.boolean(),
});

export const ToolResult = z.strictObject({
  ...envelope,
  kind: z.literal('tool/result'),
  turn: TurnId,
  step: StepId,
  callId: CallId,
  toolCallId: z.string(),
  name: z.string(),
  status: ToolResultStatus,
  /** A stable code for anything but `ok`: UNKNOWN_TOOL, INVALID_ARGUMENTS, DENIED, ABORTED, TOOL_TIMEOUT, … */
  code: z.string().optional(),
  content: z.string(),
  verdict: Verdict.optional(),
  /** With `denied` (format 2): the reason the decision gave, as the content states it. */
  reason: z.string().optional(),
  surfaceOp: SurfaceOp,
});

export const StepEnd = z.strictObject({
  ...envelope,
  kind: z.literal('step/end'),
  turn: TurnId,
  step: StepId,
  reason: StepEndReason,
});

export const TurnEnd = z.strictObject({
  ...envelope,
  kind: z.literal('turn/end'),
  turn: TurnId,
  reason: TurnEndReason,
  steps: z.int().nonnegative(),
  cause: z.string().optional(),
  code: z.string().optional(),
});

export const Checkpoint = z.strictObject({
  ...envelope,
  kind: z.literal('checkpoint'),
  turn: TurnId,
  snapshot: z.unknown(),
});

/**
 * What a repair found: `torn-tail` (a cut last line), `open-turn` (a crash left a turn open), `orphan-compaction`
 * (a compaction/start without its end), `turn-fault` (a live append failed and the harness closed the turn).
 */
export const RepairFound = z.enum(['torn-tail', 'open-turn', 'orphan-compaction', 'turn-fault']);
export type RepairFound = z.infer<typeof RepairFound>;

export const Repair = z.strictObject({
  ...envelope,
  kind: z.literal('repair'),
  found: RepairFound,
  /** For people; code reads the structured fields. */
  detail: z.string(),
  /** `torn-tail` (format 2): the 1-based line that was cut, and its length in bytes. */
  line: z.int().positive().optional(),
  bytes: z.int().nonnegative().optional(),
});

/**
 * A flush that failed (ADR 0017): the entries up to `upTo` were written but the store could not make them
 * durable. Written by the harness right after the failure, so a reader (and replay) knows which save failed;
 * what follows is as unsaved as what it covers. `detail` is the store's message, `sysCode` the system's code.
 */
export const LogNotDurable = z.strictObject({
  ...envelope,
  kind: z.literal('log/not-durable'),
  upTo: z.int().positive(),
  detail: z.string(),
  sysCode: z.string().optional(),
  /** The flush was the save of this `session/input` (format 2): its sender was told it was not received (ADR 0021). */
  input: z.int().positive().optional(),
});

/** A writer's claim on a session (a JSONL lock file, later a lease): its process, host and since when. */
export const WriterClaim = z.strictObject({ pid: z.int().positive(), host: z.string(), since: z.string() });

/**
 * A new writer took over the session from one that is gone (its lock named a dead process on this host),
 * ADR 0017. Marked `ignorable`: it explains, and a reader that does not know it loses nothing.
 */
export const SessionTakeover = z.strictObject({
  ...envelope,
  kind: z.literal('session/takeover'),
  stale: WriterClaim,
  by: z.strictObject({ pid: z.int().positive(), host: z.string() }),
});

/** How input is taken: its own turn (`followup`), the running turn's next step (`steer`), context for the next step (`inject`). */
export const InputMode = z.enum(['followup', 'steer', 'inject']);
export type InputMode = z.infer<typeof InputMode>;

/**
 * Input that reached the session (format 2, ADR 0021): logged, and flushed, before whoever sent it is told it
 * was received. A turn that takes it says so with `from` (its `turn/start`, or the `user/message` that
 * delivers a steer or inject); one that no entry names yet is queued, and a resume delivers it again.
 * `origin`: who sent it (`user`, or the harness: `system` for a plugin's advisory, `resume` for a resume note).
 */
export const SessionInput = z.strictObject({
  ...envelope,
  kind: z.literal('session/input'),
  mode: InputMode,
  text: z.string(),
  origin: Origin,
});

/** A cancel of the running turn or compaction, as it arrived (format 2); `by`: who asked (`user`, `parent`, a client). */
export const SessionCancel = z.strictObject({
  ...envelope,
  kind: z.literal('session/cancel'),
  by: z.string().min(1),
});

/** A request to compact now (between turns: right after the running one), as it arrived (format 2). */
export const SessionCompact = z.strictObject({
  ...envelope,
  kind: z.literal('session/compact'),
  by: z.string().min(1),
});

/**
 * The session was ended at rest (format 2): the running turn or compaction is cancelled and nothing queued
 * starts in this process. Queued input stays in the log, unconsumed: a resume delivers it.
 */
export const SessionEnd = z.strictObject({
  ...envelope,
  kind: z.literal('session/end'),
  by: z.string().min(1),
});

/**
 * A process opened the existing log to go on writing it (format 2): a resume, `run --session`, a server
 * serving a session its predecessor left. What it is handed first is the input the log holds queued.
 * Replay starts a segment here. `writer`: the process, when it holds the session's lock.
 */
export const SessionReopen = z.strictObject({
  ...envelope,
  kind: z.literal('session/reopen'),
  writer: z.strictObject({ pid: z.int().positive(), host: z.string() }).optional(),
});

export const HookReport = z.strictObject({
  ...envelope,
  kind: z.literal('hook/report'),
  hook: z.string(),
  listener: z.string(),
  problem: z.string(),
  turn: TurnId.optional(),
  step: StepId.optional(),
  callId: CallId.optional(),
});

export const CompactionStart = z.strictObject({
  ...envelope,
  kind: z.literal('compaction/start'),
  turn: TurnId.optional(),
  trigger: z.enum(['proactive', 'reactive', 'manual']),
  estimatedTokens: z.int().nonnegative(),
  window: z.int().positive(),
});
export const CompactionSummary = z.strictObject({
  ...envelope,
  kind: z.literal('compaction/summary'),
  start: z.int().positive(),
  end: z.int().positive(),
  text: z.string(),
});
export const CompactionEnd = z.strictObject({
  ...envelope,
  kind: z.literal('compaction/end'),
  outcome: z.enum(['compacted', 'pruned', 'nothing-to-do', 'failed', 'interrupted']),
  tokensBefore: z.int().nonnegative(),
  tokensAfter: z.int().nonnegative(),
});

export const SubagentStart = z.strictObject({
  ...envelope,
  kind: z.literal('subagent/start'),
  callId: CallId,
  child: z.string(),
  depth: z.int().positive(),
  /** The provider that runs the child: `spawn`, `fork`, `process`, `mock-remote`, or one a plugin registered. */
  mode: z.string().regex(/^[a-z][a-z0-9-]*$/),
});
export const SubagentEnd = z.strictObject({
  ...envelope,
  kind: z.literal('subagent/end'),
  callId: CallId,
  child: z.string(),
  reason: TurnEndReason,
  /** Why, when it did not complete: `SUBAGENT_CRASHED`, `TREE_BUDGET_EXHAUSTED`, the parent's cancel (`ABORTED`), … */
  code: z.string().min(1).optional(),
});

/**
 * A Ralph round's structured handoff to the next round (`bridle ralph`):
 * what it claims, what it did, what shows it, what is left. Capped as a
 * whole (HANDOFF_CAP_BYTES of JSON); over the cap is the child's to fix.
 */
export const Handoff = z.strictObject({
  status: z.enum(['continue', 'complete', 'blocked']),
  summary: z.string(),
  evidence: z.string(),
  nextSteps: z.array(z.string()).optional(),
  blockerText: z.string().optional(),
});
export type Handoff = z.infer<typeof Handoff>;
export const HANDOFF_CAP_BYTES = 4096;

/** A Ralph run begins: the immutable objective, the round cap, and how a claim of complete is checked. */
export const RalphStart = z.strictObject({
  ...envelope,
  kind: z.literal('ralph/start'),
  objective: z.string().min(1),
  rounds: z.int().positive(),
  verify: z.string().nullable(),
  verifier: z.boolean(),
});
/** Round `round` begins in a fresh child session (`attempt` > 1: the round again, after the one before it was interrupted). */
export const RalphRound = z.strictObject({
  ...envelope,
  kind: z.literal('ralph/round'),
  round: z.int().positive(),
  attempt: z.int().positive(),
  child: z.string().min(1),
});
/** The round ended: how its child's turn ended, and the handoff it left (`tool`: through the handoff tool; `last-text`: it left none). */
export const RalphHandoff = z.strictObject({
  ...envelope,
  kind: z.literal('ralph/handoff'),
  round: z.int().positive(),
  child: z.string().min(1),
  reason: TurnEndReason,
  source: z.enum(['tool', 'last-text', 'interrupted']),
  handoff: Handoff,
});
/** A claim of complete is being checked: by the `--verify` command, or by a verifier agent (`child`). */
export const RalphVerify = z.strictObject({
  ...envelope,
  kind: z.literal('ralph/verify'),
  round: z.int().positive(),
  by: z.enum(['command', 'agent']),
  command: z.string().optional(),
  child: z.string().optional(),
});
/** What the check found: `verified`, the output it is based on (capped), the command's exit code, or why it could not say (`code`). */
export const RalphVerdict = z.strictObject({
  ...envelope,
  kind: z.literal('ralph/verdict'),
  round: z.int().positive(),
  by: z.enum(['command', 'agent']),
  verified: z.boolean(),
  output: z.string(),
  exitCode: z.int().nullable().optional(),
  code: z.string().min(1).optional(),
});
/** The run ended: verified complete, out of rounds, blocked (with its blocker), cancelled. */
export const RalphEnd = z.strictObject({
  ...envelope,
  kind: z.literal('ralph/end'),
  outcome: z.enum(['verified', 'exhausted', 'blocked', 'cancelled']),
  round: z.int().nonnegative(),
  blockerText: z.string().optional(),
});

/**
 * An MCP server a row mounted (`mcp:<name>`), once it started or failed to: the tools it offers as
 * registered (with the class approval and scheduling read, which replay needs and the wire form does
 * not carry), what was left out and why, or why it failed. Written by the MCP plugin, never by a
 * machine; marked `ignorable` so a reader that does not know it may skip it.
 */
export const McpServer = z.strictObject({
  ...envelope,
  kind: z.literal('mcp/server'),
  /** The row id, `mcp:<name>`. */
  server: z.string(),
  outcome: z.enum(['started', 'failed']),
  tools: z.array(z.strictObject({ name: z.string(), readOnly: z.boolean(), idempotent: z.boolean() })),
  /** Tools left out (a schema that cannot be read, a name the wire refuses), one line each. */
  problems: z.array(z.string()),
  /** For `failed`: `MCP_START_FAILED`, and what happened. */
  code: z.string().optional(),
  message: z.string().optional(),
});

export const Entry = z.discriminatedUnion('kind', [
  SessionStart,
  TurnStart,
  UserMessage,
  StepStart,
  RequestHeader,
  AssistantMessage,
  ModelRetry,
  ToolCall,
  ApprovalAsked,
  ApprovalDecided,
  ToolDispatch,
  ToolResult,
  StepEnd,
  TurnEnd,
  Checkpoint,
  Repair,
  LogNotDurable,
  SessionTakeover,
  SessionInput,
  SessionCancel,
  SessionCompact,
  SessionEnd,
  SessionReopen,
  SessionPolicyChange,
  HookReport,
  CompactionStart,
  CompactionSummary,
  CompactionEnd,
  SubagentStart,
  SubagentEnd,
  RalphStart,
  RalphRound,
  RalphHandoff,
  RalphVerify,
  RalphVerdict,
  RalphEnd,
  McpServer,
]);
export type Entry = z.infer<typeof Entry>;
export type EntryKind = Entry['kind'];
export type EntryOf<K extends EntryKind> = Extract<Entry, { kind: K }>;

/** An entry before the recorder stamps it: no `seq`, no `at`. */
export type Draft = Entry extends infer E ? (E extends Entry ? Omit<E, 'seq' | 'at'> : never) : never;
export type DraftOf<K extends EntryKind> = Omit<EntryOf<K>, 'seq' | 'at'>;

export const ENTRY_KINDS: readonly EntryKind[] = Entry.options.map((o) => o.shape.kind.value);

/** Kinds whose entries can reach a model request. */
export const MODEL_VISIBLE = new Set<EntryKind>(['user/message', 'assistant/message', 'tool/result']);

/** The entries that record what reached the session from outside: replay sends each again where it stands. */
export const INPUT_KINDS = new Set<EntryKind>(['session/input', 'session/cancel', 'session/compact', 'session/end']);
