/**
 * The `openai` model provider: chat completions, streaming, against any
 * OpenAI-compatible base URL (OpenAI, DeepSeek, Ollama, vLLM, llama.cpp).
 *
 * The translation is split by concern: `openai-wire.ts` (request → wire),
 * `openai-stream.ts` (wire chunks → bridle chunks, the I8 endings),
 * `openai-errors.ts` (errors → normalized codes).
 */
import OpenAI from 'openai';
import type { Clock, ModelProvider } from '../../actors/ports.js';
import type { Chunk } from '../../log/chunks.js';
import type { Finish } from '../../log/entries.js';
import type { ModelRequest } from '../../log/messages.js';
import { mapError } from './openai-errors.js';
import { createStreamMapper } from './openai-stream.js';
import { toWireParams } from './openai-wire.js';

export { mapError, parseRetryAfter } from './openai-errors.js';
export { toWireMessages, toWireParams, toWireTools } from './openai-wire.js';

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
  /** Longest wait for the response headers, and then for each next chunk; default: the SDK's 10 minutes, no idle limit. */
  timeoutMs?: number;
  /** Reads an HTTP-date `retry-after`; inject it where the log must be reproducible. */
  now?: Clock;
}

export interface OpenAIProvider extends ModelProvider {
  readonly model: string;
  readonly baseURL: string;
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
  let client: OpenAI | undefined;
  let setupFailure: Finish | undefined;
  const apiKey = options.apiKey || (isLoopback(baseURL) ? LOOPBACK_PLACEHOLDER_KEY : undefined);
  if (!apiKey) {
    setupFailure = {
      kind: 'error',
      code: 'AUTH',
      message: `no API key: set OPENAI_API_KEY (or point --base-url at a local server) to use ${baseURL}`,
    };
  } else {
    try {
      client = new OpenAI({
        apiKey,
        baseURL,
        maxRetries: 0,
        ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
        ...(options.fetch ? { fetch: options.fetch } : {}),
      });
    } catch (err) {
      setupFailure = { kind: 'error', code: 'BAD_REQUEST', message: `cannot create the OpenAI client: ${String(err)}` };
    }
  }

  async function* stream(request: ModelRequest, signal: AbortSignal): AsyncGenerator<Chunk> {
    if (signal.aborted) return yield finishChunk({ kind: 'aborted' });
    if (!client) return yield finishChunk(setupFailure!);
    const mapper = createStreamMapper();
    // The SDK's timeout stops at the headers; a stalled body is caught by this idle timer.
    const idle = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const rearm = () => {
      if (options.timeoutMs === undefined) return;
      clearTimeout(timer);
      timer = setTimeout(() => idle.abort(), options.timeoutMs);
    };
    let failure: Finish | undefined;
    try {
      const wire = await client.chat.completions.create(toWireParams(request, options.model), {
        signal: AbortSignal.any([signal, idle.signal]),
      });
      rearm();
      for await (const part of wire) {
        rearm();
        for (const c of mapper.push(part)) yield c;
      }
    } catch (err) {
      failure = mapError(err, now);
    } finally {
      clearTimeout(timer);
    }
    // The SDK ends an aborted iteration quietly, so the signals are the truth.
    if (signal.aborted) failure = { kind: 'aborted' };
    else if (idle.signal.aborted) failure = { kind: 'error', code: 'TIMEOUT', message: `no data from the model for ${options.timeoutMs} ms` };
    for (const c of mapper.end(failure)) yield c;
  }

  return { id: 'openai', model: options.model, baseURL, stream };
}
