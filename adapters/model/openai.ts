/**
 * The `openai` model provider: chat completions, streaming, against any
 * OpenAI-compatible base URL (OpenAI, DeepSeek, Ollama, vLLM, llama.cpp).
 *
 * The translation is split by concern: `openai-wire.ts` (request → wire),
 * `openai-stream.ts` (wire chunks → bridle chunks, the I8 endings),
 * `openai-errors.ts` (errors → normalized codes).
 */
import { z } from 'zod';
import { MODEL } from '../../ports/index.js';
import { defineProvider } from '../../ports/provider.js';
import type { ModelRequest } from '../../log/messages.js';
import { openAIClient } from './lazy-sdk.js';
import { createStreamMapper } from './openai-stream.js';
import { toWireParams } from './openai-wire.js';
import { REASONING_EFFORTS, type ReasoningEffort } from './openai-responses-wire.js';
import { streamOnce, wireOptionsOf, wireSetup, type WireOptions, type WireProvider } from './wire-provider.js';

export const DEFAULT_BASE_URL = 'https://api.openai.com/v1';

export interface OpenAIProviderOptions extends WireOptions {
  /** Default `https://api.openai.com/v1`; the SDK's `OPENAI_BASE_URL` fallback is not used: the caller decides. */
  baseURL?: string;
  maxOutputTokens?: number;
  reasoningEffort?: ReasoningEffort;
}

export type OpenAIProvider = WireProvider;

/**
 * Contract: never throws, here or in `stream` (I8): a missing key or a client
 * that cannot be built turns into an error `finish` on every stream. The SDK
 * does not retry (`maxRetries: 0`): bridle retries above this layer, and logs it.
 */
export function createOpenAIProvider(options: OpenAIProviderOptions): OpenAIProvider {
  const baseURL = options.baseURL ?? DEFAULT_BASE_URL;
  const wire = wireSetup(options, baseURL, 'OPENAI_API_KEY', openAIClient);
  const withDefault = (r: ModelRequest) => (r.maxTokens === undefined && options.maxOutputTokens !== undefined ? { ...r, maxTokens: options.maxOutputTokens } : r);
  const stream = (r: ModelRequest, signal: AbortSignal) =>
    streamOnce(wire, signal, createStreamMapper, (client) => {
      const params = toWireParams(withDefault(r), options.model);
      if (options.reasoningEffort !== undefined) params.reasoning_effort = options.reasoningEffort;
      return client.chat.completions.create(params, { signal });
    });
  return { id: 'openai', name: options.model, model: options.model, baseURL, limits: wire.limits, stream };
}

export const OpenAIConfig = z.strictObject({
  /** The model id; required to run, optional to compose (`config --dump` shows a row without one). Both OpenAI wires' rows take this config. */
  model: z.string().min(1).optional(),
  baseUrl: z.url().default(DEFAULT_BASE_URL),
  /** The environment variable holding the key (never the key itself: rows are printed and logged). */
  apiKeyEnv: z.string().min(1).default('OPENAI_API_KEY'),
  /** `max_tokens` of every request that sets none of its own. */
  maxOutputTokens: z.int().positive().optional(),
  /** `reasoning_effort`, for reasoning models behind chat completions; unset, none is sent. */
  reasoningEffort: z.enum(REASONING_EFFORTS).optional(),
  streamIdleMs: z.int().positive().optional(),
  streamTotalMs: z.int().positive().optional(),
});
export type OpenAIConfig = z.infer<typeof OpenAIConfig>;

/** The chat-completions wires' `use` names: `openai-chat`, and `openai`, its name before the Responses provider came (ADR 0044). */
export const CHAT_USES: readonly string[] = ['openai-chat', 'openai'];
/** The model rows whose config is an OpenAI-style endpoint (`model`, `baseUrl`, `apiKeyEnv`): the flags edit these in place. */
export const OPENAI_USES: readonly string[] = [...CHAT_USES, 'openai-responses'];

/** A chat or Responses row's config as its provider's options. Contract: throws only as `modelAndKey` does. */
export function openAIOptionsOf(c: OpenAIConfig, what: string) {
  return {
    ...wireOptionsOf(c, what),
    ...(c.maxOutputTokens !== undefined ? { maxOutputTokens: c.maxOutputTokens } : {}),
    ...(c.reasoningEffort !== undefined ? { reasoningEffort: c.reasoningEffort } : {}),
  };
}

/** The `openai-chat` provider of the model seam: any OpenAI-compatible chat-completions server. */
export const openaiChatModel = defineProvider({
  seam: MODEL,
  name: 'openai-chat',
  config: OpenAIConfig,
  create: (c) => createOpenAIProvider(openAIOptionsOf(c, 'an OpenAI-compatible model')),
});

/** `use: openai`, kept so configs written before the rename still mean what they meant. */
export const openaiModel = defineProvider({ ...openaiChatModel, name: 'openai' });
