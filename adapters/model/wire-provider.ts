/**
 * What the HTTP model wires (chat completions, Responses, Anthropic Messages)
 * do the same way around their SDKs: a row's model and key checked at
 * `create`, the options every wire's row becomes, the set-up of a provider
 * (its clock, deadlines, and the client it opens at the first request), and
 * one streamed request on a wire that does not continue a paused answer.
 * Each wire keeps its own messages: it names the kind of model, and the
 * variable its key comes from by default.
 */
import type { Clock } from '../../log/clock.js';
import type { ModelProvider } from '../../ports/model.js';
import type { Chunk } from '../../log/chunks.js';
import { ModelCode, type Finish } from '../../log/entry-values.js';
import { ProviderSetupError } from '../../ports/provider.js';
import type { ClientOptions } from './lazy-sdk.js';
import { resolveStreamLimits, type StreamLimits } from './openai-deadlines.js';

/** Sent to loopback servers when no key is given; Ollama, llama.cpp and vLLM ignore it. */
const LOOPBACK_PLACEHOLDER_KEY = 'bridle-local';

/** True for 127.0.0.0/8, ::1 and localhost: servers that need no real key. */
export function isLoopback(baseURL: string): boolean {
  try {
    const host = new URL(baseURL).hostname.toLowerCase();
    return host === 'localhost' || host.endsWith('.localhost') || host === '[::1]' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
  } catch {
    return false;
  }
}

/** The keys every wire's row has, read the same way (the defaults differ, in each wire's schema). */
export interface WireRow {
  model?: string;
  baseUrl: string;
  /** The environment variable holding the key. */
  apiKeyEnv: string;
  streamIdleMs?: number;
  streamTotalMs?: number;
}

/**
 * What every wire's row needs before it can run: a model id, and the key from the variable the row names
 * (a loopback server needs none). `what` names the kind of model in the message.
 * Contract: returns the model and the key, or throws `ProviderSetupError` with the one line a user needs.
 */
export function modelAndKey(c: Pick<WireRow, 'model' | 'apiKeyEnv' | 'baseUrl'>, what: string): { model: string; apiKey: string | undefined } {
  if (!c.model) throw new ProviderSetupError(`no model: pass --model <id> (${what}) or --model scripted:<file>`);
  const apiKey = process.env[c.apiKeyEnv];
  if (!apiKey && !isLoopback(c.baseUrl)) throw new ProviderSetupError(`${c.apiKeyEnv} is not set: export it, or point --base-url at a local server (${c.baseUrl} needs a key)`);
  return { model: c.model, apiKey };
}

/** What every wire's provider takes the same way: the model, the endpoint, the key and the variable it came from, the deadlines. */
export interface WireOptions {
  model: string;
  baseURL?: string;
  /** May be missing: streams then end in `AUTH`, except against a loopback server. */
  apiKey?: string;
  /** The variable the key was to come from, named when it is missing (default: the wire's own). */
  apiKeyEnv?: string;
  fetch?: typeof fetch;
  /** No `data:` event for this long (headers included; keep-alive comments do not count) ends the stream `TIMEOUT`. Default 300 000. */
  streamIdleMs?: number;
  /** The whole request, headers to last byte, within this; past it the stream ends `TIMEOUT`. Default 1 800 000. */
  streamTotalMs?: number;
  /** The longest line a stream may send before a newline; past it the stream ends `TRANSPORT`. Default 4 MiB. */
  maxLineBytes?: number;
  /** Reads an HTTP-date `retry-after`; inject it where the log must be reproducible. */
  now?: Clock;
}

/** A row's config as a wire's options (`modelAndKey` first). Contract: throws only as `modelAndKey` does. */
export function wireOptionsOf(c: WireRow, what: string): Required<Pick<WireOptions, 'model' | 'baseURL' | 'apiKeyEnv'>> & Pick<WireOptions, 'apiKey' | 'streamIdleMs' | 'streamTotalMs'> {
  const { model, apiKey } = modelAndKey(c, what);
  return { model, baseURL: c.baseUrl, apiKey, apiKeyEnv: c.apiKeyEnv, streamIdleMs: c.streamIdleMs, streamTotalMs: c.streamTotalMs };
}

/** A wire's provider: the model it asks for when a request names none, its endpoint, and the deadlines and line cap every stream is held to, defaults filled. */
export interface WireProvider extends ModelProvider {
  readonly model: string;
  readonly baseURL: string;
  readonly limits: StreamLimits;
}

/** A wire's SDK client, opened at the first request: the client and its error mapping, or the `Finish` every stream ends with. */
export type Connect<C> = () => Promise<{ client: C; mapError: (err: unknown, now: Clock) => Finish } | Finish>;

/**
 * A provider's set-up: its clock and deadlines, and the client it opens at the first request. A loopback server
 * without a key gets a placeholder; no key at all is every stream's `AUTH` finish, naming `apiKeyEnv` (else `keyEnv`).
 * Contract: never throws.
 */
export function wireSetup<C>(o: WireOptions, baseURL: string, keyEnv: string, open: (c: ClientOptions) => Connect<C>): { now: Clock; limits: StreamLimits; connect: Connect<C> } {
  const now = o.now ?? Date.now;
  const limits = resolveStreamLimits({ idleMs: o.streamIdleMs, totalMs: o.streamTotalMs, maxLineBytes: o.maxLineBytes });
  const apiKey = o.apiKey || (isLoopback(baseURL) ? LOOPBACK_PLACEHOLDER_KEY : undefined);
  const noKey: Finish = { kind: 'error', code: ModelCode.AUTH, message: `no API key: set ${o.apiKeyEnv ?? keyEnv} (or point --base-url at a local server) to use ${baseURL}` };
  return { now, limits, connect: open({ apiKey, noKey, baseURL, limits, ...(o.fetch ? { fetch: o.fetch } : {}) }) };
}

export const finishChunk = (finish: Finish): Chunk => ({ type: 'finish', finish });

/** A wire's translation of its events into bridle's chunks (the I8 endings: `end` closes what is open, once). */
export interface EventMapper<E> {
  push(event: E): Chunk[];
  end(override?: Finish): Chunk[];
}

/**
 * One streamed request on a wire that answers in one pass: the client opened, `request` sent (built inside the
 * guard, so a request it cannot build is a mapped error), each event mapped, and the stream ended by the mapper,
 * with the error it met or `aborted` when the signal was (the SDK ends an aborted iteration quietly, so the
 * signal is the truth). Contract: never throws (I8).
 */
export async function* streamOnce<C, E>(
  { connect, now }: { connect: Connect<C>; now: Clock },
  signal: AbortSignal,
  mapper: () => EventMapper<E>,
  request: (client: C) => Promise<AsyncIterable<E>>,
): AsyncGenerator<Chunk> {
  if (signal.aborted) return yield finishChunk({ kind: 'aborted' });
  const connected = await connect();
  if ('kind' in connected) return yield finishChunk(connected);
  const { client, mapError } = connected;
  const m = mapper();
  let failure: Finish | undefined;
  try {
    for await (const event of await request(client)) {
      for (const c of m.push(event)) yield c;
    }
  } catch (err) {
    failure = mapError(err, now);
  }
  if (signal.aborted) failure = { kind: 'aborted' };
  for (const c of m.end(failure)) yield c;
}
