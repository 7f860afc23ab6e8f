/**
 * The `openai-responses` model provider: OpenAI's Responses API, streaming,
 * through the installed `openai` 6.x SDK (ADR 0044). Reasoning models'
 * reasoning items are requested encrypted, logged as received and sent back
 * in every later request, so the model does not re-think after each tool
 * call; nothing is stored server-side.
 *
 * The translation is split by concern: `openai-responses-wire.ts` (request →
 * wire), `openai-responses-stream.ts` (events → bridle chunks, the I8
 * endings); errors and the stream deadlines are the Chat Completions
 * provider's (`openai-errors.ts`, `openai-deadlines.ts`).
 *
 * Not yet run against the live endpoint: proven against recorded streams and a
 * local fake only.
 */
import { z } from 'zod';
import { MODEL } from '../../ports/index.js';
import type { ModelProvider } from '../../ports/model.js';
import { defineProvider } from '../../ports/provider.js';
import type { Clock } from '../../log/clock.js';
import type { Chunk } from '../../log/chunks.js';
import type { Finish } from '../../log/entry-values.js';
import type { ModelRequest } from '../../log/messages.js';
import { resolveStreamLimits, type StreamLimits } from './openai-deadlines.js';
import { openAIClient } from './lazy-sdk.js';
import { DEFAULT_BASE_URL, isLoopback, modelAndKey, OpenAIConfig } from './openai.js';
import { createResponsesStreamMapper } from './openai-responses-stream.js';
import { toResponsesParams, type ReasoningEffort } from './openai-responses-wire.js';
import { ModelCode } from '../../log/entry-values.js';

const LOOPBACK_PLACEHOLDER_KEY = 'bridle-local';

export interface ResponsesProviderOptions {
  model: string;
  baseURL?: string;
  apiKey?: string;
  /** The variable the key was to come from, named when it is missing. */
  apiKeyEnv?: string;
  maxOutputTokens?: number;
  reasoningEffort?: ReasoningEffort;
  fetch?: typeof fetch;
  streamIdleMs?: number;
  streamTotalMs?: number;
  maxLineBytes?: number;
  /** Reads an HTTP-date `retry-after`; inject it where the log must be reproducible. */
  now?: Clock;
}

export interface ResponsesProvider extends ModelProvider {
  readonly model: string;
  readonly baseURL: string;
  readonly limits: StreamLimits;
}

const finishChunk = (finish: Finish): Chunk => ({ type: 'finish', finish });

/**
 * Contract: never throws, here or in `stream` (I8). The SDK does not retry
 * (`maxRetries: 0`): bridle's retry honours the server's `retry-after`, and logs it.
 */
export function createResponsesProvider(options: ResponsesProviderOptions): ResponsesProvider {
  const baseURL = options.baseURL ?? DEFAULT_BASE_URL;
  const now = options.now ?? Date.now;
  const limits = resolveStreamLimits({ idleMs: options.streamIdleMs, totalMs: options.streamTotalMs, maxLineBytes: options.maxLineBytes });
  const wire = { model: options.model, ...(options.maxOutputTokens !== undefined ? { maxOutputTokens: options.maxOutputTokens } : {}), ...(options.reasoningEffort !== undefined ? { reasoningEffort: options.reasoningEffort } : {}) };
  const apiKey = options.apiKey || (isLoopback(baseURL) ? LOOPBACK_PLACEHOLDER_KEY : undefined);
  const noKey: Finish = { kind: 'error', code: ModelCode.AUTH, message: `no API key: set ${options.apiKeyEnv ?? 'OPENAI_API_KEY'} (or point --base-url at a local server) to use ${baseURL}` };
  const connect = openAIClient({ apiKey, noKey, baseURL, limits, ...(options.fetch ? { fetch: options.fetch } : {}) });

  async function* stream(request: ModelRequest, signal: AbortSignal): AsyncGenerator<Chunk> {
    if (signal.aborted) return yield finishChunk({ kind: 'aborted' });
    const connected = await connect();
    if ('kind' in connected) return yield finishChunk(connected);
    const { client, mapError } = connected;
    const mapper = createResponsesStreamMapper();
    let failure: Finish | undefined;
    try {
      const events = await client.responses.create(toResponsesParams(request, wire), { signal });
      for await (const event of events) {
        for (const c of mapper.push(event)) yield c;
      }
    } catch (err) {
      failure = mapError(err, now);
    }
    // The SDK ends an aborted iteration quietly, so the signal is the truth.
    if (signal.aborted) failure = { kind: 'aborted' };
    for (const c of mapper.end(failure)) yield c;
  }

  return { id: 'openai-responses', name: options.model, reasoning: 'openai-responses', model: options.model, baseURL, limits, stream };
}

/** The same keys as the chat wire's row, so switching between the two keeps a row's config (`--provider`). */
export const ResponsesConfig = OpenAIConfig;
export type ResponsesConfig = z.infer<typeof ResponsesConfig>;

/** The `openai-responses` provider of the model seam. */
export const openaiResponsesModel = defineProvider({
  seam: MODEL,
  name: 'openai-responses',
  config: ResponsesConfig,
  create(c) {
    const { model, apiKey } = modelAndKey(c, 'a Responses API model');
    return createResponsesProvider({
      model,
      baseURL: c.baseUrl,
      apiKey,
      apiKeyEnv: c.apiKeyEnv,
      ...(c.maxOutputTokens !== undefined ? { maxOutputTokens: c.maxOutputTokens } : {}),
      ...(c.reasoningEffort !== undefined ? { reasoningEffort: c.reasoningEffort } : {}),
      streamIdleMs: c.streamIdleMs,
      streamTotalMs: c.streamTotalMs,
    });
  },
});
