/**
 * The session's own header entries: `session/start` (with the log's format,
 * the settings and policy the session was created with) and a process's move
 * to another policy or workspace (`session/policy`). Part of the one `Entry`
 * union in `entries.ts`.
 */
import { z } from 'zod';
import { BudgetConfig } from './entries-budget.js';
import { envelope, ModelErrorCode } from './entry-values.js';

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

/**
 * Which loop the session ran when it was not bridle's own (ADR 0085): the row that provided it (`loop:agent`, or
 * `options` for a caller's plugin), its `use` as composed (a row module's absolute path, else the loop's name), and
 * the SHA-256 of the module file as it was loaded (absent when no file was read). Replay through the machines
 * loads that loop again only when the product's is the same; otherwise it refuses (`LOOP_MISMATCH`,
 * `LOOP_UNAVAILABLE`). bridle's own loop records nothing, so a base log is what it was before.
 */
export const SessionLoop = z.strictObject({
  row: z.string().min(1),
  use: z.string().min(1),
  sha256: z.string().regex(/^[0-9a-f]{64}$/).optional(),
});
export type SessionLoop = z.infer<typeof SessionLoop>;

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
  /** The loop that ran, when a row replaced bridle's own (ADR 0085); absent for bridle's. */
  loop: SessionLoop.optional(),
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
