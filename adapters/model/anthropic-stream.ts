/**
 * Anthropic Messages stream events → bridle's chunk protocol. A small
 * stateful mapper, free of I/O, so the endings of I8 are decided here and
 * tested without a server (the twins: `openai-stream.ts`,
 * `openai-responses-stream.ts`).
 *
 * Events are read by shape. A block is keyed by the event's `index`. A
 * `thinking` block streams as reasoning text and, at its `content_block_stop`,
 * hands over the whole block — its thinking and its `signature`, exactly as
 * they streamed — for the next request to send back unchanged; a
 * `redacted_thinking` block arrives whole and is handed over at once. Only a
 * `message_stop` after a known `stop_reason` is a clean end: a stream cut
 * before it is `TRANSPORT`, and a stop reason this mapper does not know is
 * an error, never a clean stop. Usage is cumulative: the last report wins.
 */
import type { Chunk } from '../../log/chunks.js';
import type { Finish, FinishReason, Usage } from '../../log/entry-values.js';
import type { AnthropicBlock } from './anthropic-wire.js';
import { ModelCode } from '../../log/entry-values.js';

export interface AnthropicStreamMapper {
  push(event: unknown): Chunk[];
  /** The closing chunks: `block-end` for every open block, the usage, then the one `finish`; `override` wins. */
  end(override?: Finish): Chunk[];
  /** The stop reason, once `message_delta` said it. */
  readonly stopReason: string | undefined;
  /** The content the response held, as the API would want it back (a `pause_turn` continues from it). */
  readonly content: AnthropicBlock[];
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : 0);

/** `stop_reason` → how bridle's step ends; `pause_turn` is the provider's to continue (`anthropic.ts`). */
const STOPS: Record<string, FinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  tool_use: 'tool-calls',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  refusal: 'refusal',
};

/** Anthropic's `error.type` values → bridle's codes. */
export function codeForAnthropicError(type: string, message: string): Extract<Finish, { kind: 'error' }>['code'] {
  if (type === 'rate_limit_error') return ModelCode.RATE_LIMIT;
  if (type === 'overloaded_error' || type === 'api_error') return ModelCode.SERVER;
  if (type === 'authentication_error' || type === 'permission_error') return ModelCode.AUTH;
  if (type === 'request_too_large' || /prompt is too long|context window|too many tokens/i.test(message)) return ModelCode.CONTEXT_WINDOW_EXCEEDED;
  if (type === 'invalid_request_error' || type === 'not_found_error') return ModelCode.BAD_REQUEST;
  if (type === 'timeout_error') return ModelCode.TIMEOUT;
  return ModelCode.SERVER;
}

interface Slot {
  index: number;
  kind: 'text' | 'thinking' | 'redacted' | 'tool';
  open: boolean;
  text: string;
  signature: string;
  block: AnthropicBlock;
}

/** What the handlers of one response share: its blocks, by the event's `index` and in order, and what it said of its end. */
interface Stream {
  slots: Map<number, Slot>;
  order: Slot[];
  /** The next block index to give out. */
  next: number;
  usage: Usage;
  sawUsage: boolean;
  /** `input_tokens` as Anthropic counts it: the cache's share left out. */
  uncached: number;
  stopReason: string | undefined;
  refusalText: string | undefined;
  heard: boolean;
  stopped: boolean;
  failure: Finish | undefined;
}

/** `offset`: the block index this response's blocks start at (a continued `pause_turn` goes on after the last). */
export function createAnthropicStreamMapper(offset = 0): AnthropicStreamMapper {
  const st: Stream = { slots: new Map(), order: [], next: offset, usage: { inputTokens: 0, outputTokens: 0 }, sawUsage: false, uncached: 0, stopReason: undefined, refusalText: undefined, heard: false, stopped: false, failure: undefined };
  return {
    get stopReason() {
      return st.stopReason;
    },
    get content() {
      return st.order.map((s) => s.block);
    },
    push(event: unknown): Chunk[] {
      if (!isObject(event) || st.stopped || st.failure) return [];
      const out = eventChunks(st, event);
      if (st.heard) return out;
      // The response's first event (`message_start`, as a rule): the step times it (ADR 0079).
      st.heard = true;
      return [{ type: 'first-chunk' }, ...out];
    },
    end: (override?: Finish) => endChunks(st, override),
  };
}

function eventChunks(st: Stream, event: Json): Chunk[] {
  switch (event.type) {
    case 'message_start':
      if (isObject(event.message)) readUsage(st, event.message.usage);
      return [];
    case 'content_block_start':
      return startBlock(st, event);
    case 'content_block_delta':
      return blockDelta(st, event);
    case 'content_block_stop': {
      const s = st.slots.get(count(event.index));
      return s && s.index >= 0 ? closeBlock(s) : [];
    }
    case 'message_delta':
      readMessageDelta(st, event);
      return [];
    case 'message_stop':
      st.stopped = true;
      return [];
    case 'error': {
      const err = isObject(event.error) ? event.error : {};
      st.failure = { kind: 'error', code: codeForAnthropicError(str(err.type), str(err.message)), message: str(err.message) || str(err.type) || 'the stream reported an error' };
      return [];
    }
    default:
      return [];
  }
}

// Anthropic's `input_tokens` leaves out what was read from or written to the cache; bridle's `inputTokens`
// is every input token on every wire (as OpenAI's is), the cache's share counted apart within it.
function readUsage(st: Stream, u: unknown): void {
  if (!isObject(u)) return;
  const usage = st.usage;
  st.sawUsage = true;
  if (u.input_tokens !== undefined) st.uncached = count(u.input_tokens);
  if (u.output_tokens !== undefined) usage.outputTokens = count(u.output_tokens);
  if (u.cache_read_input_tokens !== undefined) usage.cachedTokens = count(u.cache_read_input_tokens);
  if (u.cache_creation_input_tokens !== undefined) usage.cacheWriteTokens = count(u.cache_creation_input_tokens);
  const details = isObject(u.output_tokens_details) ? u.output_tokens_details : undefined;
  if (details && details.thinking_tokens !== undefined) usage.reasoningTokens = count(details.thinking_tokens);
  usage.inputTokens = st.uncached + (usage.cachedTokens ?? 0) + (usage.cacheWriteTokens ?? 0);
}

function readMessageDelta(st: Stream, event: Json): void {
  const d = isObject(event.delta) ? event.delta : {};
  if (typeof d.stop_reason === 'string') st.stopReason = d.stop_reason;
  const details = isObject(d.stop_details) ? d.stop_details : undefined;
  if (details && typeof details.explanation === 'string') st.refusalText = details.explanation;
  readUsage(st, event.usage);
}

function startBlock(st: Stream, e: Json): Chunk[] {
  const b = isObject(e.content_block) ? e.content_block : {};
  const key = count(e.index);
  if (st.slots.has(key)) return [];
  const s: Slot = { index: st.next, kind: 'text', open: true, text: '', signature: '', block: b as AnthropicBlock };
  const out = openSlot(s, b);
  if (out) st.next++;
  // A server tool's block, citations and the like: nothing bridle runs or shows; kept for a continuation.
  else Object.assign(s, { open: false, index: -1 });
  st.slots.set(key, s);
  st.order.push(s);
  return out ?? [];
}

/** The chunks that open a block of a kind bridle streams, its kind set on `s`; `undefined` for any other kind. */
function openSlot(s: Slot, b: Json): Chunk[] | undefined {
  switch (str(b.type)) {
    case 'text': {
      const out: Chunk[] = [{ type: 'block-start', index: s.index, block: { type: 'text' } }];
      if (str(b.text)) {
        s.text = str(b.text);
        out.push({ type: 'text-delta', index: s.index, text: s.text });
      }
      return out;
    }
    case 'thinking': {
      s.kind = 'thinking';
      s.text = str(b.thinking);
      s.signature = str(b.signature);
      const out: Chunk[] = [{ type: 'block-start', index: s.index, block: { type: 'reasoning' } }];
      if (s.text) out.push({ type: 'reasoning-delta', index: s.index, text: s.text });
      return out;
    }
    case 'redacted_thinking':
      s.kind = 'redacted';
      s.open = false;
      return [
        { type: 'block-start', index: s.index, block: { type: 'reasoning' } },
        { type: 'block-end', index: s.index, opaque: { provider: 'anthropic', data: b } },
      ];
    case 'tool_use':
      s.kind = 'tool';
      return [{ type: 'block-start', index: s.index, block: { type: 'tool-call', id: str(b.id), name: str(b.name) } }];
    default:
      return undefined;
  }
}

function blockDelta(st: Stream, e: Json): Chunk[] {
  const s = st.slots.get(count(e.index));
  const d = isObject(e.delta) ? e.delta : {};
  if (!s || !s.open) return [];
  switch (str(d.type)) {
    case 'text_delta':
      s.text += str(d.text);
      return str(d.text) ? [{ type: 'text-delta', index: s.index, text: str(d.text) }] : [];
    case 'thinking_delta':
      s.text += str(d.thinking);
      return str(d.thinking) ? [{ type: 'reasoning-delta', index: s.index, text: str(d.thinking) }] : [];
    case 'signature_delta':
      s.signature += str(d.signature);
      return [];
    case 'input_json_delta':
      s.text += str(d.partial_json);
      return str(d.partial_json) ? [{ type: 'tool-call-delta', index: s.index, argumentsDelta: str(d.partial_json) }] : [];
    default:
      return [];
  }
}

function closeBlock(s: Slot): Chunk[] {
  if (!s.open) return [];
  s.open = false;
  if (s.kind === 'thinking') {
    s.block = { type: 'thinking', thinking: s.text, signature: s.signature };
    return [{ type: 'block-end', index: s.index, opaque: { provider: 'anthropic', data: s.block } }];
  }
  if (s.kind === 'text') s.block = { ...s.block, text: s.text };
  if (s.kind === 'tool') {
    s.block = { ...s.block, input: parsedInput(s.text) };
    // A call with no arguments streams none: bridle's calls carry a JSON object.
    if (s.text.trim() === '') {
      s.text = '{}';
      return [{ type: 'tool-call-delta', index: s.index, argumentsDelta: '{}' }, { type: 'block-end', index: s.index }];
    }
  }
  return [{ type: 'block-end', index: s.index }];
}

function endChunks(st: Stream, override: Finish | undefined): Chunk[] {
  const out: Chunk[] = [];
  for (const s of st.order) if (s.index >= 0) out.push(...closeBlock(s));
  const finish = override ?? decide(st);
  // A refusal with nothing said: the explanation the API gave is what the model "said".
  if (finish.kind === 'ok' && finish.reason === 'refusal' && !st.order.some((s) => s.kind === 'text' && s.text)) {
    const i = st.next++;
    out.push({ type: 'block-start', index: i, block: { type: 'text', refusal: true } }, { type: 'text-delta', index: i, text: st.refusalText ?? 'The model declined to answer.' }, { type: 'block-end', index: i });
  }
  if (st.sawUsage) out.push({ type: 'usage', usage: { ...st.usage } });
  out.push({ type: 'finish', finish });
  return out;
}

function decide(st: Stream): Finish {
  const { failure, stopReason } = st;
  if (failure) return failure;
  if (!st.stopped) return { kind: 'error', code: ModelCode.TRANSPORT, message: 'the stream ended before message_stop' };
  if (stopReason === undefined) return { kind: 'error', code: ModelCode.TRANSPORT, message: 'the stream ended without a stop_reason' };
  if (Object.hasOwn(STOPS, stopReason)) return { kind: 'ok', reason: STOPS[stopReason]! };
  return { kind: 'error', code: ModelCode.UNKNOWN, message: `unknown stop_reason ${JSON.stringify(stopReason).slice(0, 80)}` };
}

function parsedInput(text: string): unknown {
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}
