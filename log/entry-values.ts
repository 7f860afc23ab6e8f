/**
 * The values the log's entries are made of (content blocks, usage, finish and
 * failure codes, the ids that link a call to its step and turn) and the
 * envelope every entry shares. `entries.ts` builds the entry kinds from them.
 */
import { z } from 'zod';
import { CALL_ID, STEP_ID, TURN_ID } from './ids.js';

export const SurfaceOp = z.union([
  z.literal('append'),
  z.strictObject({ op: z.literal('replace'), start: z.int().positive(), end: z.int().positive() }),
]);
export type SurfaceOp = z.infer<typeof SurfaceOp>;

/** `refusal`: the model declined (OpenAI's `refusal` field); the text is what it said, kept and shown as text. */
export const TextBlock = z.strictObject({ type: z.literal('text'), text: z.string(), refusal: z.literal(true).optional() });
/** The wires whose reasoning comes with an opaque payload that must go back to the same wire exactly as received. */
export const ReasoningProvider = z.enum(['openai-responses', 'anthropic']);
export type ReasoningProvider = z.infer<typeof ReasoningProvider>;
/**
 * `text`: what the model showed of its thinking (a summary, or the thinking itself), shown as thought.
 * `provider` and `data`: the item or block as the provider sent it (a Responses `reasoning` output item with
 * its `encrypted_content`; an Anthropic `thinking` block with its `signature`, or `redacted_thinking`), kept
 * whole so the provider's wire can send it back unchanged; only that wire does (ADR 0044). `data` is
 * `unknown` rather than a JSON schema: it was parsed from JSON and is written back as JSON, and a recursive
 * schema would cost every log line the compiled check (`entry-check.ts`). Both absent on older logs and on
 * wires with nothing to send back.
 */
export const ReasoningBlock = z.strictObject({
  type: z.literal('reasoning'),
  text: z.string(),
  provider: ReasoningProvider.optional(),
  data: z.unknown().optional(),
});
export type ReasoningBlock = z.infer<typeof ReasoningBlock>;
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

/**
 * What a provider reported for one model call. `inputTokens` is every input token, the cache's included, on
 * every wire (Anthropic's own `input_tokens` leaves the cache out: its adapter adds it back); `cachedTokens`
 * and `cacheWriteTokens` are the shares of it read from and written to the prompt cache; `reasoningTokens` is
 * the share of `outputTokens` spent thinking.
 */
export const Usage = z.strictObject({
  inputTokens: z.int().nonnegative(),
  outputTokens: z.int().nonnegative(),
  reasoningTokens: z.int().nonnegative().optional(),
  /** Input tokens read from the provider's prompt cache (OpenAI `cached_tokens`, Anthropic `cache_read_input_tokens`). */
  cachedTokens: z.int().nonnegative().optional(),
  /** Input tokens written to the prompt cache, where the provider bills them apart (Anthropic `cache_creation_input_tokens`). */
  cacheWriteTokens: z.int().nonnegative().optional(),
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
  /** The answer grew past what one log entry may hold (`log/entry-size.ts`): cut there, the stream stopped. */
  'OUTPUT_TOO_LARGE',
]);
export type ModelErrorCode = z.infer<typeof ModelErrorCode>;
/** The same codes as a value to write them with: `ModelCode.RATE_LIMIT`. */
export const ModelCode = ModelErrorCode.enum;

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

export const TurnId = z.string().regex(TURN_ID);
export const StepId = z.string().regex(STEP_ID);
export const CallId = z.string().regex(CALL_ID);

/**
 * Where an entry about one call stands: its turn, step and call. Every entry of a call's life (`tool/*`,
 * `approval/*`, a tool's `question/*`) spreads it right after its `kind`, so the fields keep their order.
 */
export const inCall = { turn: TurnId, step: StepId, callId: CallId };

/** The `seq` of the `session/input` an entry consumed (format 2). */
export const From = z.int().positive();

export const envelope = {
  seq: z.int().positive(),
  at: z.iso.datetime(),
  /** A reader that does not know this kind may skip it instead of refusing the log. */
  ignorable: z.literal(true).optional(),
};
