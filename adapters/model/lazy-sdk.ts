/**
 * The model SDKs, loaded at a provider's first request rather than when its
 * module is: a run on one wire (or on the scripted model, as most tests are)
 * never loads the others' packages — the Anthropic SDK is some 270 files and
 * brings `@opentelemetry/api`, the OpenAI SDK some 150 — which was most of a
 * CLI start (ADR 0071). Each loader brings the SDK with the module that
 * matches its error classes, since nothing else needs them.
 */
import type OpenAI from 'openai';
import type Anthropic from '@anthropic-ai/sdk';
import type { Finish } from '../../log/entry-values.js';
import { guardFetch, type StreamLimits } from './openai-deadlines.js';
import { ModelCode } from '../../log/entry-values.js';

/** Contract: `f` runs at most once; every call gets its promise. */
export function once<T>(f: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= f());
}

/** Contract: never rejects; a package that cannot be loaded is an error `finish` naming it. */
const loader = <T>(pkg: string, load: () => Promise<T>) =>
  once(async (): Promise<T | Finish> => {
    try {
      return await load();
    } catch (err) {
      return { kind: 'error', code: ModelCode.UNKNOWN, message: `cannot load ${pkg}: ${(err as Error)?.message ?? String(err)}` };
    }
  });

export const loadOpenAISdk = loader('openai', async () => {
  const [{ default: OpenAI }, { mapError }] = await Promise.all([import('openai'), import('./openai-errors.js')]);
  return { OpenAI, mapError };
});
export type OpenAISdk = Exclude<Awaited<ReturnType<typeof loadOpenAISdk>>, Finish>;

export const loadAnthropicSdk = loader('@anthropic-ai/sdk', async () => {
  const [{ default: Anthropic }, { mapAnthropicError }] = await Promise.all([import('@anthropic-ai/sdk'), import('./anthropic-errors.js')]);
  return { Anthropic, mapAnthropicError };
});
export type AnthropicSdk = Exclude<Awaited<ReturnType<typeof loadAnthropicSdk>>, Finish>;

/** What a wire needs to open its client: the key (absent: `noKey` is every stream's finish), the endpoint and bridle's deadlines. */
export interface ClientOptions {
  apiKey: string | undefined;
  noKey: Finish;
  baseURL: string;
  limits: StreamLimits;
  fetch?: typeof globalThis.fetch;
}

/** The options every SDK's client takes the same way from bridle. */
const clientSettings = (o: ClientOptions) => ({ apiKey: o.apiKey, baseURL: o.baseURL, maxRetries: 0, timeout: o.limits.totalMs, fetch: guardFetch(o.fetch ?? globalThis.fetch, o.limits) });

/**
 * Contract: never rejects; the first call loads the SDK (`load`) and builds the client (`build`), once. The SDK does not
 * retry (`maxRetries: 0`): bridle retries above it, and logs it. The deadlines live under the SDK, in the fetch it calls;
 * its own timeout (headers only) is left no earlier than ours.
 */
function clientOf<S extends object, C>(o: ClientOptions, what: string, load: () => Promise<S | Finish>, build: (sdk: S, settings: ReturnType<typeof clientSettings>) => C): () => Promise<C | Finish> {
  return once(async () => {
    if (!o.apiKey) return o.noKey;
    const sdk = await load();
    if ('kind' in sdk) return sdk;
    try {
      return build(sdk, clientSettings(o));
    } catch (err) {
      return { kind: 'error', code: ModelCode.BAD_REQUEST, message: `cannot create the ${what} client: ${String(err)}` };
    }
  });
}

export const openAIClient = (o: ClientOptions): (() => Promise<{ client: OpenAI; mapError: OpenAISdk['mapError'] } | Finish>) =>
  clientOf(o, 'OpenAI', loadOpenAISdk, (sdk, settings) => ({ client: new sdk.OpenAI(settings), mapError: sdk.mapError }));

export const anthropicClient = (o: ClientOptions): (() => Promise<{ client: Anthropic; mapError: AnthropicSdk['mapAnthropicError'] } | Finish>) =>
  clientOf(o, 'Anthropic', loadAnthropicSdk, (sdk, settings) => ({ client: new sdk.Anthropic(settings), mapError: sdk.mapAnthropicError }));
