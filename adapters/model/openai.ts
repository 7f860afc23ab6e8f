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
import type { ModelProvider } from '../../ports/model.js';
import { defineProvider, ProviderSetupError } from '../../ports/provider.js';
import type { Clock } from '../../log/clock.js';
import type { Chunk } from '../../log/chunks.js';
import type { Finish } from '../../log/entry-values.js';
import type { ModelRequest } from '../../log/messages.js';
import { openAIClient } from './lazy-sdk.js';
import { resolveStreamLimits, type StreamLimits } from './openai-deadlines.js';
import { createStreamMapper } from './openai-stream.js';
import { toWireParams } from './openai-wire.js';
import { REASONING_EFFORTS, type ReasoningEffort } from './openai-responses-wire.js';
import { ModelCode } from '../../log/entry-values.js';

export const DEFAULT_BASE_URL = 'https://api.openai.com/v1';
/** Sent to loopback servers when no key is given; Ollama, llama.cpp and vLLM ignore it. */
const LOOPBACK_PLACEHOLDER_KEY = 'bridle-local';

export interface OpenAIProviderOptions {
  /** Used when a request names no model. */
  model: string;
  /** Default `https://api.openai.com/v1`; the SDK's `OPENAI_BASE_URL` fallback is not used: the caller decides. */
  baseURL?: string;
  /** May be missing: streams then end in `AUTH`, except against a loopback server. */
  apiKey?: string;
  fetch?: typeof fetch;
  /** No `data:` event for this long (headers included; keep-alive comments do not count) ends the stream `TIMEOUT`. Default 300 000. */
  streamIdleMs?: number;
  /** The whole request, headers to last byte, within this; past it the stream ends `TIMEOUT`. Default 1 800 000. */
  streamTotalMs?: number;
  /** The longest line a stream may send before a newline; past it the stream ends `TRANSPORT`. Default 4 MiB. */
  maxLineBytes?: number;
  /** Reads an HTTP-date `retry-after`; inject it where the log must be reproducible. */
  now?: Clock;
  maxOutputTokens?: number;
  reasoningEffort?: ReasoningEffort;
}

export interface OpenAIProvider extends ModelProvider {
  readonly model: string;
  readonly baseURL: string;
  /** The deadlines and line cap every stream is held to, defaults filled. */
  readonly limits: StreamLimits;
}

/** True for 127.0.0.0/8, ::1 and localhost: servers that need no real key. */
export function isLoopback(baseURL: string): boolean {
  try {
    const host = new URL(baseURL).hostname.toLowerCase();
    return host === 'localhost' || host.endsWith('.localhost') || host === '[::1]' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
  } catch {
    return false;
  }
}

const finishChunk = (finish: Finish): Chunk => ({ type: 'finish', finish });

/**
 * Contract: never throws, here or in `stream` (I8): a missing key or a client
 * that cannot be built turns into an error `finish` on every stream. The SDK
 * does not retry (`maxRetries: 0`): bridle retries above this layer, and logs it.
 */
export function createOpenAIProvider(options: OpenAIProviderOptions): OpenAIProvider {
  const baseURL = options.baseURL ?? DEFAULT_BASE_URL;
  const now = options.now ?? Date.now;
  const limits = resolveStreamLimits({ idleMs: options.streamIdleMs, totalMs: options.streamTotalMs, maxLineBytes: options.maxLineBytes });
  const apiKey = options.apiKey || (isLoopback(baseURL) ? LOOPBACK_PLACEHOLDER_KEY : undefined);
  const noKey: Finish = { kind: 'error', code: ModelCode.AUTH, message: `no API key: set OPENAI_API_KEY (or point --base-url at a local server) to use ${baseURL}` };
  const connect = openAIClient({ apiKey, noKey, baseURL, limits, ...(options.fetch ? { fetch: options.fetch } : {}) });

  async function* stream(request: ModelRequest, signal: AbortSignal): AsyncGenerator<Chunk> {
    if (signal.aborted) return yield finishChunk({ kind: 'aborted' });
    const connected = await connect();
    if ('kind' in connected) return yield finishChunk(connected);
    const { client, mapError } = connected;
    const mapper = createStreamMapper();
    let failure: Finish | undefined;
    try {
      const params = toWireParams(request.maxTokens === undefined && options.maxOutputTokens !== undefined ? { ...request, maxTokens: options.maxOutputTokens } : request, options.model);
      if (options.reasoningEffort !== undefined) params.reasoning_effort = options.reasoningEffort;
      const wire = await client.chat.completions.create(params, { signal });
      for await (const part of wire) {
        for (const c of mapper.push(part)) yield c;
      }
    } catch (err) {
      failure = mapError(err, now);
    }
    // The SDK ends an aborted iteration quietly, so the signal is the truth.
    if (signal.aborted) failure = { kind: 'aborted' };
    for (const c of mapper.end(failure)) yield c;
  }

  return { id: 'openai', name: options.model, model: options.model, baseURL, limits, stream };
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

/**
 * What every wire's row needs before it can run: a model id, and the key from the variable the row names
 * (a loopback server needs none). `what` names the kind of model in the message.
 * Contract: returns the model and the key, or throws `ProviderSetupError` with the one line a user needs.
 */
export function modelAndKey(c: { model?: string; apiKeyEnv: string; baseUrl: string }, what: string): { model: string; apiKey: string | undefined } {
  if (!c.model) throw new ProviderSetupError(`no model: pass --model <id> (${what}) or --model scripted:<file>`);
  const apiKey = process.env[c.apiKeyEnv];
  if (!apiKey && !isLoopback(c.baseUrl)) throw new ProviderSetupError(`${c.apiKeyEnv} is not set: export it, or point --base-url at a local server (${c.baseUrl} needs a key)`);
  return { model: c.model, apiKey };
}

/** The `openai-chat` provider of the model seam: any OpenAI-compatible chat-completions server. */
export const openaiChatModel = defineProvider({
  seam: MODEL,
  name: 'openai-chat',
  config: OpenAIConfig,
  create(c) {
    const { model, apiKey } = modelAndKey(c, 'an OpenAI-compatible model');
    return createOpenAIProvider({
      model,
      baseURL: c.baseUrl,
      apiKey,
      streamIdleMs: c.streamIdleMs,
      streamTotalMs: c.streamTotalMs,
      ...(c.maxOutputTokens !== undefined ? { maxOutputTokens: c.maxOutputTokens } : {}),
      ...(c.reasoningEffort !== undefined ? { reasoningEffort: c.reasoningEffort } : {}),
    });
  },
});

/** `use: openai`, kept so configs written before the rename still mean what they meant. */
export const openaiModel = defineProvider({ ...openaiChatModel, name: 'openai' });
