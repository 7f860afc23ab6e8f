/**
 * The `anthropic` model provider: Anthropic's Messages API, streaming,
 * through the official `@anthropic-ai/sdk` (ADR 0046). Extended thinking
 * works with tool use: each thinking block is logged as received, signature
 * and all, and sent back first in the assistant turn it belongs to; the
 * request carries prompt-cache breakpoints at stable points.
 *
 * Split by concern: `anthropic-wire.ts` (request → wire, breakpoints),
 * `anthropic-stream.ts` (events → bridle chunks, the I8 endings),
 * `anthropic-errors.ts` (SDK errors → codes); the stream deadlines are the
 * shared `openai-deadlines.ts` (a fetch that ends a stalled body).
 *
 * A `pause_turn` (the API paused a long turn) is continued as the API asks:
 * the same request again with the paused answer as the last assistant
 * message, its blocks streaming on into the same bridle message.
 *
 * Not yet run against the live endpoint: proven against recorded streams
 * and a local fake only.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { z } from 'zod';
import { MODEL } from '../../ports/index.js';
import { defineProvider } from '../../ports/provider.js';
import type { Chunk } from '../../log/chunks.js';
import type { Finish } from '../../log/entry-values.js';
import type { ModelRequest } from '../../log/messages.js';
import { anthropicClient } from './lazy-sdk.js';
import { finishChunk, wireOptionsOf, wireSetup, type WireOptions, type WireProvider } from './wire-provider.js';
import { createAnthropicStreamMapper } from './anthropic-stream.js';
import { toAnthropicParams, type AnthropicWireOptions } from './anthropic-wire.js';
import { ModelCode } from '../../log/entry-values.js';

export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com';
/** How many times one step follows a `pause_turn` before it gives up (the API pauses long server-tool turns). */
export const MAX_PAUSE_CONTINUATIONS = 4;

export interface AnthropicProviderOptions extends WireOptions {
  /** Without `/v1`: the SDK appends `/v1/messages`. */
  baseURL?: string;
  maxOutputTokens?: number;
  thinkingBudget?: number;
}

export type AnthropicProvider = WireProvider;

/**
 * Contract: never throws, here or in `stream` (I8). The SDK does not retry
 * (`maxRetries: 0`): bridle's retry honours `retry-after`, and logs it.
 */
export function createAnthropicProvider(options: AnthropicProviderOptions): AnthropicProvider {
  const baseURL = (options.baseURL ?? ANTHROPIC_BASE_URL).replace(/\/v1\/?$/, '');
  const { now, limits, connect } = wireSetup(options, baseURL, 'ANTHROPIC_API_KEY', anthropicClient);
  const wire: AnthropicWireOptions = { model: options.model, maxOutputTokens: options.maxOutputTokens ?? 8192, ...(options.thinkingBudget !== undefined ? { thinkingBudget: options.thinkingBudget } : {}) };

  async function* stream(request: ModelRequest, signal: AbortSignal): AsyncGenerator<Chunk> {
    if (signal.aborted) return yield finishChunk({ kind: 'aborted' });
    const connected = await connect();
    if ('kind' in connected) return yield finishChunk(connected);
    const { client, mapError: mapAnthropicError } = connected;
    const params = toAnthropicParams(request, wire);
    let offset = 0;
    for (let round = 0; ; round++) {
      const mapper = createAnthropicStreamMapper(offset);
      let failure: Finish | undefined;
      try {
        const events = await client.messages.create(params as unknown as Anthropic.MessageCreateParamsStreaming, { signal });
        for await (const event of events) {
          for (const c of mapper.push(event)) {
            // One answer, one first chunk (ADR 0079): a continuation's first event is not the answer's.
            if (c.type === 'first-chunk' && round > 0) continue;
            if (c.type === 'block-start') offset = Math.max(offset, c.index + 1);
            yield c;
          }
        }
      } catch (err) {
        failure = mapAnthropicError(err, now);
      }
      if (signal.aborted) failure = { kind: 'aborted' };
      if (!failure && mapper.stopReason === 'pause_turn' && round < MAX_PAUSE_CONTINUATIONS) {
        // Continue as the API asks: the paused answer goes back as the last assistant turn, unchanged.
        for (const c of mapper.end({ kind: 'ok', reason: 'stop' })) if (c.type === 'block-end') yield c;
        const last = params.messages.at(-1);
        if (last && last.role === 'assistant') last.content.push(...mapper.content);
        else params.messages.push({ role: 'assistant', content: mapper.content });
        continue;
      }
      const tail = mapper.end(failure ?? (mapper.stopReason === 'pause_turn' ? { kind: 'error', code: ModelCode.UNKNOWN, message: `the API paused the turn more than ${MAX_PAUSE_CONTINUATIONS} times` } : undefined));
      for (const c of tail) yield c;
      return;
    }
  }

  return { id: 'anthropic', name: options.model, reasoning: 'anthropic', model: options.model, baseURL, limits, stream };
}

export const AnthropicConfig = z.strictObject({
  /** The model id; required to run, optional to compose. */
  model: z.string().min(1).optional(),
  /** Without `/v1` (the SDK appends `/v1/messages`); one ending in `/v1` is accepted and trimmed. */
  baseUrl: z.url().default(ANTHROPIC_BASE_URL),
  /** The environment variable holding the key (never the key itself: rows are printed and logged). */
  apiKeyEnv: z.string().min(1).default('ANTHROPIC_API_KEY'),
  /** `max_tokens` of every request that sets none (the API requires one). */
  maxOutputTokens: z.int().positive().default(8192),
  /** Extended thinking's `budget_tokens` (at least 1024; below `maxOutputTokens`); unset: no thinking. */
  thinkingBudget: z.int().min(1024).optional(),
  streamIdleMs: z.int().positive().optional(),
  streamTotalMs: z.int().positive().optional(),
});
export type AnthropicConfig = z.infer<typeof AnthropicConfig>;

/** The `anthropic` provider of the model seam. */
export const anthropicModel = defineProvider({
  seam: MODEL,
  name: 'anthropic',
  config: AnthropicConfig,
  create: (c) =>
    createAnthropicProvider({
      ...wireOptionsOf(c, 'a Claude model'),
      maxOutputTokens: c.maxOutputTokens,
      ...(c.thinkingBudget !== undefined ? { thinkingBudget: c.thinkingBudget } : {}),
    }),
});
