/**
 * A turn and its steps: `turn/start` … `turn/end`, each step's `step/start`,
 * request header, retries, answer and `step/end`, the user's messages in the
 * turn, and the checkpoint after it. Part of the one `Entry` union in
 * `entries.ts`.
 */
import { z } from 'zod';
import { Block, envelope, Finish, From, ModelErrorCode, Origin, ReasoningProvider, StepEndReason, StepId, SurfaceOp, ToolSpec, TurnEndReason, TurnId, Usage, Verdict } from './entry-values.js';

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
