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
import { defineProvider } from '../../ports/provider.js';
import type { ModelRequest } from '../../log/messages.js';
import { openAIClient } from './lazy-sdk.js';
import { DEFAULT_BASE_URL, OpenAIConfig, openAIOptionsOf, type OpenAIProviderOptions } from './openai.js';
import { createResponsesStreamMapper } from './openai-responses-stream.js';
import { toResponsesParams } from './openai-responses-wire.js';
import { streamOnce, wireSetup, type WireProvider } from './wire-provider.js';

/** The chat wire's options: the same row config becomes either (`--provider`). */
export type ResponsesProviderOptions = OpenAIProviderOptions;

export type ResponsesProvider = WireProvider;

/**
 * Contract: never throws, here or in `stream` (I8). The SDK does not retry
 * (`maxRetries: 0`): bridle's retry honours the server's `retry-after`, and logs it.
 */
export function createResponsesProvider(options: ResponsesProviderOptions): ResponsesProvider {
  const baseURL = options.baseURL ?? DEFAULT_BASE_URL;
  const wire = wireSetup(options, baseURL, 'OPENAI_API_KEY', openAIClient);
  const params = { model: options.model, ...(options.maxOutputTokens !== undefined ? { maxOutputTokens: options.maxOutputTokens } : {}), ...(options.reasoningEffort !== undefined ? { reasoningEffort: options.reasoningEffort } : {}) };
  const stream = (r: ModelRequest, signal: AbortSignal) => streamOnce(wire, signal, createResponsesStreamMapper, (client) => client.responses.create(toResponsesParams(r, params), { signal }));
  return { id: 'openai-responses', name: options.model, reasoning: 'openai-responses', model: options.model, baseURL, limits: wire.limits, stream };
}

/** The same keys as the chat wire's row, so switching between the two keeps a row's config (`--provider`). */
export const ResponsesConfig = OpenAIConfig;
export type ResponsesConfig = z.infer<typeof ResponsesConfig>;

/** The `openai-responses` provider of the model seam. */
export const openaiResponsesModel = defineProvider({
  seam: MODEL,
  name: 'openai-responses',
  config: ResponsesConfig,
  create: (c) => createResponsesProvider(openAIOptionsOf(c, 'a Responses API model')),
});
