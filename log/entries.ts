/**
 * The session log's entry schemas: one zod schema per kind, the envelope
 * `{ seq, at, kind, ...fields }`, and the types derived from them.
 * A schema is written once (here, or in the `entries-*.ts` and
 * `entry-values.ts` files this re-exports); every reader and writer parses
 * with the one `Entry` union below.
 */
import { z } from 'zod';
import { LogNotDurable, Repair, SessionTakeover } from './entries-durability.js';
import { SessionCancel, SessionCompact, SessionEnd, SessionInput, SessionReopen } from './entries-inputs.js';
import { RalphStart, RalphRound, RalphHandoff, RalphVerify, RalphVerdict, RalphEnd } from './entries-ralph.js';
import { BudgetAsked, BudgetConfig, BudgetDecided, Spend } from './entries-budget.js';
import { QuestionAsked, QuestionDecided } from './entries-questions.js';
import { SurfaceOp, Block, Usage, ModelErrorCode, Finish, ToolSpec, TurnEndReason, StepEndReason, Origin, ToolResultStatus, Verdict, TurnId, StepId, CallId, From, envelope, ReasoningProvider } from './entry-values.js';

export * from './entry-values.js';
export * from './entries-durability.js';
export * from './entries-inputs.js';
export * from './entries-ralph.js';
export * from './entries-budget.js';
export * from './entries-questions.js';

/**
 * The log's format. 2: inputs are entries (`session/input`, `session/cancel`, `session/compact`,
 * `session/end`), consumption links back to them (`from`), repair notes and denials carry structured
 * fields (ADR 0021). Readers read 1 and 2; only format 2 replays through the machines or continues.
 */
export const LOG_FORMAT = 2;
export const LOG_FORMATS = [1, 2] as const;


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
  /** The session's budget for itself and its subagent tree (ADR 0047). */
  budget: BudgetConfig.optional(),
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
  /**
   * The W3C trace context the session's spans hang under (ADR 0055): given from outside (`TRACEPARENT`, a
   * `session/create` parameter, ACP `_meta`) or by the parent that started it. Logged, so a trace exported
   * months later is the one exported live.
   */
  traceparent: z.string().regex(/^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/).optional(),
});

/**
 * A process went on with the session under another policy than the one it had (ADR 0027): a narrowing its
 * flags asked for (`by: 'flags'`), or a widening `--override-policy` allowed (`by: 'override-policy'`). Logged
 * after the reopening, before anything runs; the session's policy is the last such `to`, else `session/start`'s.
 * A move to another workspace, which only `--move-workspace` allows (ADR 0041), is one too: `cwd` says from
 * where to where (`by: 'move-workspace'` when nothing else changed); the session's workspace is the last such
 * `cwd.to`, else `session/start`'s `cwd`.
 */
export const SessionPolicyChange = z.strictObject({
  ...envelope,
  kind: z.literal('session/policy'),
  from: SessionPolicy,
  to: SessionPolicy,
  by: z.enum(['flags', 'override-policy', 'move-workspace']),
  cwd: z.strictObject({ from: z.string(), to: z.string() }).optional(),
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
    /** The provider whose opaque reasoning this session's wire sends back; absent: none (ADR 0044). */
    reasoning: ReasoningProvider.optional(),
  }),
  /**
   * Reasoning blocks in the projection at this header that carry another provider's payload (a session whose
   * provider changed): the wire does not send them, and this says so. Absent when there are none.
   */
  droppedReasoning: z.int().positive().optional(),
});

export const AssistantMessage = z.strictObject({
  ...envelope,
  kind: z.literal('assistant/message'),
  turn: TurnId,
  step: StepId,
  blocks: z.array(Block),
  usage: Usage.optional(),
  /**
   * Milliseconds from the request going out to the response's first chunk, on the session's clock (ADR 0079):
   * the conventions' time to first chunk. Absent: no chunk came (a refused request), or a log from before it.
   */
  firstChunkMs: z.int().nonnegative().optional(),
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
  /** A stable code for anything but `ok`: UNKNOWN_TOOL, INVALID_ARGUMENTS, DENIED, ABORTED, TOOL_TIMEOUT, … (the harness's own: `ToolResultCode`, codes.ts) */
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
  /** The model the child runs on, as its own `session/start` names it (ADR 0066); absent when the child's log did not say. */
  model: z.string().min(1).optional(),
});
export const SubagentEnd = z.strictObject({
  ...envelope,
  kind: z.literal('subagent/end'),
  callId: CallId,
  child: z.string(),
  reason: TurnEndReason,
  /** Why, when it did not complete: `SUBAGENT_CRASHED`, `TREE_BUDGET_EXHAUSTED`, the parent's cancel (`ABORTED`), … */
  code: z.string().min(1).optional(),
  /** What the child and its own tree spent, when its turn ended (ADR 0047): the parent's budget counts it. */
  usage: Spend.optional(),
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
  /** `relisted`: the server announced a changed tool list (`notifications/tools/list_changed`); `tools` is the new list, offered from the next step on. */
  outcome: z.enum(['started', 'failed', 'relisted']),
  tools: z.array(z.strictObject({ name: z.string(), readOnly: z.boolean(), idempotent: z.boolean() })),
  /** Tools left out (a schema that cannot be read, a name the wire refuses), one line each. */
  problems: z.array(z.string()),
  /** For `failed`: `MCP_START_FAILED` (or `MCP_NAME_TAKEN`: another row has its tool prefix), and what happened. */
  code: z.string().optional(),
  message: z.string().optional(),
});

/**
 * What a process of the session found of Agent Skills (ADR 0064): each skill it lists in the prompt, and
 * a named warning (`SKILL_NAME_INVALID`, …) for each one it skipped or noted. Written by the
 * `prompt:skills` row before its first turn, only when there is something to say; marked `ignorable`.
 */
export const SkillsFound = z.strictObject({
  ...envelope,
  kind: z.literal('skills/found'),
  skills: z.array(z.strictObject({ name: z.string(), source: z.enum(['workspace', 'home']), path: z.string() })),
  warnings: z.array(z.strictObject({ code: z.string(), path: z.string(), message: z.string() })),
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
  SkillsFound,
  BudgetAsked,
  BudgetDecided,
  QuestionAsked,
  QuestionDecided,
]);
export type Entry = z.infer<typeof Entry>;
export type EntryKind = Entry['kind'];
export type EntryOf<K extends EntryKind> = Extract<Entry, { kind: K }>;

/** An entry before the recorder stamps it: no `seq`, no `at`. */
export type Draft = Entry extends infer E ? (E extends Entry ? Omit<E, 'seq' | 'at'> : never) : never;
export type DraftOf<K extends EntryKind> = Omit<EntryOf<K>, 'seq' | 'at'>;

export const ENTRY_KINDS: readonly EntryKind[] = Entry.options.map((o) => o.shape.kind.value);

/** The entries that record what reached the session from outside: replay sends each again where it stands. */
export const INPUT_KINDS = new Set<EntryKind>(['session/input', 'session/cancel', 'session/compact', 'session/end']);
