/**
 * Any bridle model (a scripted one, the sweep's) behind each real provider:
 * the provider's wire mapper builds the request, its real SDK sends it, and
 * an in-process `fetch` answers it in that wire's SSE, encoded from the
 * chunks the inner model streams for the same neutral request. So a suite
 * written against the neutral chunk protocol runs, unchanged, through
 * `openai-chat`, `openai-responses` and `anthropic` (issue 21 item 5).
 *
 * Why an injected `fetch` and not a socket: no port, no server to close,
 * nothing another test file running at the same time can touch; the SDK,
 * the deadlines' guarded fetch, the SSE parser and the stream mapper are
 * all the real ones. The bodies the SDK sent are kept (`bodies`): they are
 * the bytes a provider's prompt cache sees.
 *
 * How the inner model's endings reach the wire: an error finish before any
 * content is the HTTP error that provider sends for it (429 with
 * `retry-after-ms`, 401, 500, a 400 whose body names a context overflow);
 * `EMPTY_RESPONSE` is a clean stop with nothing in it (the mapper decides);
 * `TIMEOUT` is the idle deadline tripping under the SDK; `TRANSPORT`, a
 * thrown stream or one that stops without a finish, is the connection
 * dropping (`TypeError: terminated`, as undici reports it).
 */
import { createAnthropicProvider } from '../../adapters/model/anthropic.js';
import { createOpenAIProvider } from '../../adapters/model/openai.js';
import { createResponsesProvider } from '../../adapters/model/openai-responses.js';
import { StreamLimitError } from '../../adapters/model/openai-deadlines.js';
import type { Chunk } from '../../log/chunks.js';
import type { Finish, Usage } from '../../log/entry-values.js';
import type { ModelRequest } from '../../log/messages.js';
import type { ModelProvider } from '../../ports/model.js';

export const WIRES = ['openai-chat', 'openai-responses', 'anthropic'] as const;
export type Wire = (typeof WIRES)[number];

type Json = Record<string, unknown>;
type ErrorFinish = Extract<Finish, { kind: 'error' }>;

/** A wire's SSE, frame by frame, from bridle chunks. `end` closes a stream that had its finish. */
interface Encoder {
  push(c: Chunk): string;
}

const sse = (data: unknown, event?: string) => `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;

/** A deterministic stand-in for a provider's opaque payload (encrypted reasoning, a signature): the same text, the same bytes. */
const sealed = (text: string) => `sealed:${Buffer.from(text).toString('base64')}`;

function chatEncoder(): Encoder {
  const calls = new Map<number, number>();
  let usage: Usage | undefined;
  const chunk = (delta: Json, finish: string | null = null) => sse({ id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1_780_000_000, model: 'fake', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
  const reasons: Record<string, string> = { stop: 'stop', 'tool-calls': 'tool_calls', length: 'length', 'content-filter': 'content_filter', refusal: 'stop' };
  return {
    push(c) {
      switch (c.type) {
        case 'block-start':
          if (c.block.type !== 'tool-call') return '';
          calls.set(c.index, calls.size);
          return chunk({ tool_calls: [{ index: calls.get(c.index), id: c.block.id, type: 'function', function: { name: c.block.name, arguments: '' } }] });
        case 'text-delta':
          return chunk({ content: c.text });
        case 'reasoning-delta':
          return chunk({ reasoning_content: c.text });
        case 'tool-call-delta':
          return chunk({ tool_calls: [{ index: calls.get(c.index), function: { arguments: c.argumentsDelta } }] });
        case 'usage':
          usage = c.usage;
          return '';
        case 'finish': {
          const reason = c.finish.kind === 'ok' ? reasons[c.finish.reason]! : 'stop';
          const u = usage && { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1_780_000_000, model: 'fake', choices: [], usage: { prompt_tokens: usage.inputTokens, completion_tokens: usage.outputTokens, total_tokens: usage.inputTokens + usage.outputTokens, ...(usage.reasoningTokens !== undefined ? { completion_tokens_details: { reasoning_tokens: usage.reasoningTokens } } : {}), ...(usage.cachedTokens !== undefined ? { prompt_tokens_details: { cached_tokens: usage.cachedTokens } } : {}) } };
          return chunk({}, reason) + (u ? sse(u) : '') + 'data: [DONE]\n\n';
        }
        default:
          return '';
      }
    },
  };
}

function responsesEncoder(): Encoder {
  let seq = 0;
  let usage: Usage | undefined;
  const items = new Map<number, { at: number; kind: string; id: string; text: string; name?: string; callId?: string }>();
  const ev = (e: Json) => sse({ ...e, sequence_number: seq++ }, e.type as string);
  const response = (status: string, extra: Json = {}) => ({ id: 'resp_fake', object: 'response', created_at: 1_780_000_000, status, model: 'fake', output: [], ...extra });
  const done = (s: { at: number; kind: string; id: string; text: string; name?: string; callId?: string }) => {
    if (s.kind === 'reasoning') {
      const item = { id: s.id, type: 'reasoning', summary: [{ type: 'summary_text', text: s.text }], encrypted_content: sealed(s.text) };
      return ev({ type: 'response.reasoning_summary_text.done', item_id: s.id, output_index: s.at, summary_index: 0, text: s.text }) + ev({ type: 'response.output_item.done', output_index: s.at, item });
    }
    if (s.kind === 'tool-call') {
      const item = { id: s.id, type: 'function_call', status: 'completed', arguments: s.text, call_id: s.callId, name: s.name };
      return ev({ type: 'response.function_call_arguments.done', item_id: s.id, output_index: s.at, arguments: s.text }) + ev({ type: 'response.output_item.done', output_index: s.at, item });
    }
    const part = { type: 'output_text', annotations: [], text: s.text };
    return (
      ev({ type: 'response.output_text.done', item_id: s.id, output_index: s.at, content_index: 0, text: s.text }) +
      ev({ type: 'response.content_part.done', item_id: s.id, output_index: s.at, content_index: 0, part }) +
      ev({ type: 'response.output_item.done', output_index: s.at, item: { id: s.id, type: 'message', status: 'completed', role: 'assistant', content: [part] } })
    );
  };
  let started = false;
  const head = () => (started ? '' : ((started = true), ev({ type: 'response.created', response: response('in_progress') })));
  return {
    push(c) {
      switch (c.type) {
        case 'block-start': {
          const at = items.size;
          const kind = c.block.type;
          const id = `${kind === 'tool-call' ? 'fc' : kind === 'reasoning' ? 'rs' : 'msg'}_${at}`;
          const s = { at, kind, id, text: '', ...(c.block.type === 'tool-call' ? { name: c.block.name, callId: c.block.id } : {}) };
          items.set(c.index, s);
          if (kind === 'reasoning') return head() + ev({ type: 'response.output_item.added', output_index: at, item: { id, type: 'reasoning', summary: [] } }) + ev({ type: 'response.reasoning_summary_part.added', item_id: id, output_index: at, summary_index: 0, part: { type: 'summary_text', text: '' } });
          if (kind === 'tool-call') return head() + ev({ type: 'response.output_item.added', output_index: at, item: { id, type: 'function_call', status: 'in_progress', arguments: '', call_id: s.callId, name: s.name } });
          return (
            head() +
            ev({ type: 'response.output_item.added', output_index: at, item: { id, type: 'message', status: 'in_progress', role: 'assistant', content: [] } }) +
            ev({ type: 'response.content_part.added', item_id: id, output_index: at, content_index: 0, part: { type: 'output_text', annotations: [], text: '' } })
          );
        }
        case 'text-delta':
        case 'reasoning-delta':
        case 'tool-call-delta': {
          const s = items.get(c.index)!;
          const delta = c.type === 'tool-call-delta' ? c.argumentsDelta : c.text;
          s.text += delta;
          const type = c.type === 'text-delta' ? 'response.output_text.delta' : c.type === 'reasoning-delta' ? 'response.reasoning_summary_text.delta' : 'response.function_call_arguments.delta';
          return ev({ type, item_id: s.id, output_index: s.at, ...(c.type === 'text-delta' ? { content_index: 0 } : c.type === 'reasoning-delta' ? { summary_index: 0 } : {}), delta });
        }
        case 'block-end':
          return done(items.get(c.index)!);
        case 'usage':
          usage = c.usage;
          return '';
        case 'finish': {
          const u = usage ?? { inputTokens: 0, outputTokens: 0 };
          const wireUsage = { input_tokens: u.inputTokens, input_tokens_details: { cached_tokens: u.cachedTokens ?? 0 }, output_tokens: u.outputTokens, output_tokens_details: { reasoning_tokens: u.reasoningTokens ?? 0 }, total_tokens: u.inputTokens + u.outputTokens };
          if (c.finish.kind === 'ok' && c.finish.reason === 'length') return head() + ev({ type: 'response.incomplete', response: response('incomplete', { incomplete_details: { reason: 'max_output_tokens' }, usage: wireUsage }) });
          return head() + ev({ type: 'response.completed', response: response('completed', { usage: wireUsage }) });
        }
        default:
          return '';
      }
    },
  };
}

function anthropicEncoder(): Encoder {
  const blocks = new Map<number, { at: number; kind: string; text: string }>();
  let usage: Usage | undefined;
  let started = false;
  const ev = (e: Json) => sse(e, e.type as string);
  const head = () =>
    started ? '' : ((started = true), ev({ type: 'message_start', message: { id: 'msg_fake', type: 'message', role: 'assistant', model: 'fake', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 0, output_tokens: 0 } } }));
  const stops: Record<string, string> = { stop: 'end_turn', 'tool-calls': 'tool_use', length: 'max_tokens', 'content-filter': 'refusal', refusal: 'refusal' };
  return {
    push(c) {
      switch (c.type) {
        case 'block-start': {
          const at = blocks.size;
          blocks.set(c.index, { at, kind: c.block.type, text: '' });
          const content_block = c.block.type === 'tool-call' ? { type: 'tool_use', id: c.block.id, name: c.block.name, input: {} } : c.block.type === 'reasoning' ? { type: 'thinking', thinking: '', signature: '' } : { type: 'text', text: '' };
          return head() + ev({ type: 'content_block_start', index: at, content_block });
        }
        case 'text-delta':
        case 'reasoning-delta':
        case 'tool-call-delta': {
          const b = blocks.get(c.index)!;
          const delta = c.type === 'text-delta' ? { type: 'text_delta', text: c.text } : c.type === 'reasoning-delta' ? { type: 'thinking_delta', thinking: c.text } : { type: 'input_json_delta', partial_json: c.argumentsDelta };
          b.text += c.type === 'tool-call-delta' ? c.argumentsDelta : c.text;
          return ev({ type: 'content_block_delta', index: b.at, delta });
        }
        case 'block-end': {
          const b = blocks.get(c.index)!;
          const sig = b.kind === 'reasoning' ? ev({ type: 'content_block_delta', index: b.at, delta: { type: 'signature_delta', signature: sealed(b.text) } }) : '';
          return sig + ev({ type: 'content_block_stop', index: b.at });
        }
        case 'usage':
          usage = c.usage;
          return '';
        case 'finish': {
          const stop = c.finish.kind === 'ok' ? stops[c.finish.reason]! : 'end_turn';
          const u = usage ?? { inputTokens: 0, outputTokens: 0 };
          const cached = (u.cachedTokens ?? 0) + (u.cacheWriteTokens ?? 0);
          const wireUsage = { input_tokens: Math.max(0, u.inputTokens - cached), output_tokens: u.outputTokens, ...(u.cachedTokens !== undefined ? { cache_read_input_tokens: u.cachedTokens } : {}), ...(u.cacheWriteTokens !== undefined ? { cache_creation_input_tokens: u.cacheWriteTokens } : {}), ...(u.reasoningTokens !== undefined ? { output_tokens_details: { thinking_tokens: u.reasoningTokens } } : {}) };
          return head() + ev({ type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: wireUsage }) + ev({ type: 'message_stop' });
        }
        default:
          return '';
      }
    },
  };
}

const encoders: Record<Wire, () => Encoder> = { 'openai-chat': chatEncoder, 'openai-responses': responsesEncoder, anthropic: anthropicEncoder };

/** The HTTP error `wire` answers `f` with, as that provider words it. */
function errorResponse(wire: Wire, f: ErrorFinish): Response {
  const status = { RATE_LIMIT: 429, AUTH: 401, SERVER: 500, CONTEXT_WINDOW_EXCEEDED: 400, BAD_REQUEST: 400 }[f.code as string] ?? 400;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (f.retryAfterMs !== undefined) headers['retry-after-ms'] = String(f.retryAfterMs);
  const overflow = f.code === 'CONTEXT_WINDOW_EXCEEDED';
  const body =
    wire === 'anthropic'
      ? { type: 'error', error: { type: status === 429 ? 'rate_limit_error' : status === 401 ? 'authentication_error' : status >= 500 ? 'api_error' : 'invalid_request_error', message: overflow ? 'prompt is too long: 250000 tokens > 200000 maximum' : f.message } }
      : { error: { message: overflow ? 'This model\'s maximum context length is 128000 tokens.' : f.message, type: 'invalid_request_error', param: null, code: overflow ? 'context_length_exceeded' : null } };
  return new Response(JSON.stringify(body), { status, headers });
}

const terminated = () => new TypeError('terminated');

const abortError = () => Object.assign(new Error('This operation was aborted'), { name: 'AbortError' });

/**
 * A `fetch` that answers each request with `source`'s chunks for it, in `wire`'s SSE.
 * `source` gets the body the SDK sent (parsed) and the request's signal.
 */
export function wireFetch(wire: Wire, source: (body: Json, signal: AbortSignal) => AsyncIterable<Chunk>, bodies: Json[]): typeof fetch {
  return (async (_url: unknown, init?: RequestInit) => {
    const body = JSON.parse(String(init?.body)) as Json;
    bodies.push(body);
    const signal = init?.signal ?? new AbortController().signal;
    const it = source(body, signal)[Symbol.asyncIterator]();
    let first: IteratorResult<Chunk>;
    try {
      first = await it.next();
    } catch {
      throw new TypeError('fetch failed');
    }
    if (signal.aborted) throw abortError();
    const f = !first.done && first.value.type === 'finish' ? first.value.finish : undefined;
    if (f?.kind === 'aborted') throw abortError();
    if (f?.kind === 'error' && f.code === 'TRANSPORT') throw new TypeError('fetch failed');
    if (f?.kind === 'error' && f.code !== 'TIMEOUT' && f.code !== 'EMPTY_RESPONSE') return errorResponse(wire, f);
    const enc = encoders[wire]();
    const text = new TextEncoder();
    let pending: IteratorResult<Chunk> | undefined = first;
    const stream = new ReadableStream<Uint8Array>({
      // A chunk the wire has no frame for (a text block's start on the chat wire) enqueues nothing: read on until one does.
      async pull(ctl) {
        for (let sent = false; !sent; ) sent = await step(ctl);
      },
      cancel() {
        void it.return?.();
      },
    });
    // An ended body lets go of the inner stream, as a dropped connection ends a server's generator.
    const fail = (ctl: ReadableStreamDefaultController<Uint8Array>, err: unknown): true => (ctl.error(err), void it.return?.(), true);
    async function step(ctl: ReadableStreamDefaultController<Uint8Array>): Promise<boolean> {
        try {
          const r = pending ?? (await it.next());
          pending = undefined;
          if (signal.aborted) return fail(ctl, abortError());
          // No finish: the connection dropped mid-answer.
          if (r.done) return fail(ctl, terminated());
          const c = r.value;
          if (c.type === 'finish' && c.finish.kind === 'error' && c.finish.code === 'TIMEOUT') return fail(ctl, new StreamLimitError('idle', 'TIMEOUT', c.finish.message));
          if (c.type === 'finish' && c.finish.kind === 'aborted') return fail(ctl, abortError());
          // An empty answer goes out as a clean stop with nothing in it: the wire's mapper says what that is.
          const out = c.type === 'finish' && c.finish.kind === 'error' ? enc.push({ type: 'finish', finish: { kind: 'ok', reason: 'stop' } }) : enc.push(c);
          if (out) ctl.enqueue(text.encode(out));
          if (c.type === 'finish') ctl.close();
          return out !== '' || c.type === 'finish';
        } catch {
          return fail(ctl, terminated());
        }
    }
    return new Response(stream, { status: 200, headers: { 'content-type': 'text/event-stream' } });
  }) as typeof fetch;
}

export interface WireModel {
  model: ModelProvider;
  /** Every request body the SDK sent, parsed, in order. */
  bodies: Json[];
}

/**
 * `inner` behind `wire`'s real provider: each request goes through the provider's wire mapper and SDK; the
 * answer is `inner`'s for the same neutral request, streamed back in that wire's SSE.
 * Contract: the provider keeps every promise of the model seam (I8), whatever `inner` does.
 */
export function wireModel(wire: Wire, inner: ModelProvider, o: { model?: string; thinkingBudget?: number } = {}): WireModel {
  const bodies: Json[] = [];
  const fetch = wireFetch(wire, (_body, signal) => inner.stream(current!, signal), bodies);
  // Requests of one session go out one at a time: the neutral request in flight is the one the fetch answers.
  let current: ModelRequest | undefined;
  return { model: providerFor(wire, inner, { ...o, fetch, onRequest: (r) => void (current = r) }), bodies };
}

/**
 * `wire`'s real provider, its SDK calling `o.fetch` (default: the real one, at `o.baseURL`); `onRequest` sees
 * each neutral request as it goes out.
 */
export function providerFor(wire: Wire, inner: Pick<ModelProvider, 'reasoning'>, o: { model?: string; thinkingBudget?: number; fetch?: typeof fetch; baseURL?: string; onRequest: (r: ModelRequest) => void }): ModelProvider {
  const common = { model: o.model ?? 'fake-model', baseURL: o.baseURL ?? 'http://127.0.0.1:9/v1', ...(o.fetch ? { fetch: o.fetch } : {}), now: () => 0 };
  const real =
    wire === 'anthropic'
      ? createAnthropicProvider({ ...common, ...(o.thinkingBudget !== undefined ? { thinkingBudget: o.thinkingBudget } : {}) })
      : wire === 'openai-responses'
        ? createResponsesProvider(common)
        : createOpenAIProvider(common);
  return {
    ...real,
    ...(inner.reasoning !== undefined && real.reasoning === undefined ? { reasoning: inner.reasoning } : {}),
    stream(request, signal) {
      o.onRequest(request);
      return real.stream(request, signal);
    },
  };
}

/** `chunks` as `wire`'s SSE body, whole (the fake's frames, without its error and cut handling). */
export function encodeChunks(wire: Wire, chunks: readonly Chunk[]): string {
  const enc = encoders[wire]();
  return chunks.map((c) => enc.push(c)).join('');
}

/** The JSON payloads of an SSE body, in order (`[DONE]` left out). */
export const ssePayloads = (body: string): Json[] =>
  body
    .split('\n\n')
    .flatMap((frame) => frame.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)))
    .filter((d) => d !== '[DONE]')
    .map((d) => JSON.parse(d) as Json);
