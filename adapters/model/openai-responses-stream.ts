/**
 * Responses API stream events → bridle's chunk protocol. A small stateful
 * mapper, free of I/O, so the rules of I8 are decided here and tested
 * without a server (the Chat Completions twin is `openai-stream.ts`).
 *
 * Events are read by shape, never trusted by their declared type. Blocks are
 * keyed by the event's `output_index`: a reasoning item, a function call, a
 * message's text (and its refusal, kept apart). A reasoning item's
 * `output_item.done` hands the whole item over at its `block-end`, exactly as
 * received, for the next request to send back (ADR 0044). Only a terminal
 * `response.completed` is a clean end: a stream cut before it is `TRANSPORT`.
 */
import type { Chunk } from '../../log/chunks.js';
import type { Finish, Usage } from '../../log/entry-values.js';
import { codeForFrame } from './wire-codes.js';
import { safeCount } from './openai-stream.js';
import { ModelCode } from '../../log/entry-values.js';

export interface ResponsesStreamMapper {
  /** The chunks one event yields. */
  push(event: unknown): Chunk[];
  /** The closing chunks: `block-end` for every open block, the usage if any, then the one `finish`; `override` wins. */
  end(override?: Finish): Chunk[];
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The usage a terminal event's response reports. */
export function toResponsesUsage(u: Json): Usage {
  const usage: Usage = { inputTokens: safeCount(u.input_tokens), outputTokens: safeCount(u.output_tokens) };
  const input = isObject(u.input_tokens_details) ? u.input_tokens_details : {};
  const output = isObject(u.output_tokens_details) ? u.output_tokens_details : {};
  if (typeof output.reasoning_tokens === 'number') usage.reasoningTokens = safeCount(output.reasoning_tokens);
  if (typeof input.cached_tokens === 'number') usage.cachedTokens = safeCount(input.cached_tokens);
  // Reported by some gateways (GitHub Copilot's recording); OpenAI itself bills no cache write.
  if (typeof input.cache_write_tokens === 'number') usage.cacheWriteTokens = safeCount(input.cache_write_tokens);
  return usage;
}

/** The summary text of a reasoning item, parts separated by a blank line (as they stream). */
const summaryOf = (item: Json): string =>
  (Array.isArray(item.summary) ? item.summary : [])
    .map((p) => (isObject(p) ? str(p.text) : ''))
    .filter(Boolean)
    .join('\n\n');

interface Slot {
  block: number;
  /** Whether anything streamed into the block (a done item fills in what never did). */
  streamed: boolean;
  /** The text or arguments streamed so far. */
  sent: string;
  /** For reasoning: the summary part the last delta belonged to. */
  part?: number;
  /** For reasoning: the item as received, handed over when the block closes. */
  item?: Json;
}

type BlockStart = Extract<Chunk, { type: 'block-start' }>['block'];
type Opaque = Extract<Chunk, { type: 'block-end' }>['opaque'];

/** What the handlers of one response share: its blocks by output index, those still open, and what it said of its end. */
interface Stream {
  next: number;
  open: Set<number>;
  // Per output index: its reasoning, call, text and refusal blocks.
  reasoning: Map<number, Slot>;
  calls: Map<number, Slot>;
  texts: Map<number, Slot>;
  refusals: Map<number, Slot>;
  usage: Usage | undefined;
  terminal: { type: string; response: Json } | undefined;
  failure: Finish | undefined;
  ended: boolean;
  heard: boolean;
}

export function createResponsesStreamMapper(): ResponsesStreamMapper {
  const st: Stream = { next: 0, open: new Set(), reasoning: new Map(), calls: new Map(), texts: new Map(), refusals: new Map(), usage: undefined, terminal: undefined, failure: undefined, ended: false, heard: false };
  return {
    push(event) {
      const out: Chunk[] = [];
      if (st.ended || !isObject(event)) return out;
      // The response's first event (`response.created`, as a rule): the step times it (ADR 0079).
      if (!st.heard) out.push({ type: 'first-chunk' });
      st.heard = true;
      onEvent(st, out, event);
      return out;
    },
    end: (override) => endChunks(st, override),
  };
}

function onEvent(st: Stream, out: Chunk[], event: Json): void {
  const at = typeof event.output_index === 'number' ? event.output_index : -1;
  const delta = str(event.delta);
  switch (event.type) {
    case 'response.output_item.added': {
      const item = isObject(event.item) ? event.item : {};
      if (item.type === 'reasoning') slot(st, out, st.reasoning, at, { type: 'reasoning' });
      if (item.type === 'function_call') slot(st, out, st.calls, at, callBlock(item, at));
      break;
    }
    case 'response.reasoning_summary_text.delta':
    case 'response.reasoning_text.delta':
      if (delta) onReasoningDelta(st, out, event, at, delta);
      break;
    case 'response.output_text.delta':
    case 'response.refusal.delta': {
      if (!delta) break;
      const s = event.type === 'response.refusal.delta' ? slot(st, out, st.refusals, at, { type: 'text', refusal: true }) : slot(st, out, st.texts, at, { type: 'text' });
      s.streamed = true;
      s.sent += delta;
      out.push({ type: 'text-delta', index: s.block, text: delta });
      break;
    }
    case 'response.function_call_arguments.delta': {
      if (!delta) break;
      const s = slot(st, out, st.calls, at, { type: 'tool-call', id: `call_${at}`, name: '' });
      s.streamed = true;
      s.sent += delta;
      out.push({ type: 'tool-call-delta', index: s.block, argumentsDelta: delta });
      break;
    }
    case 'response.output_item.done':
      if (isObject(event.item)) onItemDone(st, out, event.item, at);
      break;
    case 'response.completed':
    case 'response.incomplete':
    case 'response.failed':
      onTerminal(st, out, event.type, isObject(event.response) ? event.response : {});
      break;
    case 'error': {
      // The code and message at the top level (the API's documented shape) or under `error` (as recorded).
      const body = isObject(event.error) ? event.error : event;
      const message = str(body.message) || 'the provider reported an error';
      st.failure = { kind: 'error', code: codeForFrame(str(body.code), message), message };
      break;
    }
  }
}

function startBlock(st: Stream, out: Chunk[], block: BlockStart): Slot {
  const index = st.next++;
  st.open.add(index);
  out.push({ type: 'block-start', index, block });
  return { block: index, streamed: false, sent: '' };
}

function closeBlock(st: Stream, out: Chunk[], slot: Slot | undefined, opaque?: Opaque): void {
  if (!slot || !st.open.has(slot.block)) return;
  st.open.delete(slot.block);
  out.push(opaque ? { type: 'block-end', index: slot.block, opaque } : { type: 'block-end', index: slot.block });
}

/** The slot of output index `at` in `map`, its block started if it is new. */
function slot(st: Stream, out: Chunk[], map: Map<number, Slot>, at: number, block: BlockStart): Slot {
  let s = map.get(at);
  if (!s) map.set(at, (s = startBlock(st, out, block)));
  return s;
}

const callBlock = (item: Json, at: number) => ({ type: 'tool-call' as const, id: str(item.call_id) || str(item.id) || `call_${at}`, name: str(item.name) });

/** What `full` has beyond what streamed; nothing where the two disagree (what streamed is what the user saw, and stays). */
const remainder = (s: Slot, full: string): string => (full.startsWith(s.sent) ? full.slice(s.sent.length) : '');

function fill(out: Chunk[], s: Slot, full: string): void {
  const rest = remainder(s, full);
  if (!rest) return;
  s.sent += rest;
  out.push({ type: 'text-delta', index: s.block, text: rest });
}

function onReasoningDelta(st: Stream, out: Chunk[], event: Json, at: number, delta: string): void {
  const s = slot(st, out, st.reasoning, at, { type: 'reasoning' });
  const part = typeof event.summary_index === 'number' ? event.summary_index : (s.part ?? 0);
  const text = s.streamed && part !== s.part ? `\n\n${delta}` : delta;
  s.part = part;
  s.streamed = true;
  out.push({ type: 'reasoning-delta', index: s.block, text });
}

function onItemDone(st: Stream, out: Chunk[], item: Json, at: number): void {
  if (item.type === 'reasoning') {
    const s = slot(st, out, st.reasoning, at, { type: 'reasoning' });
    const summary = summaryOf(item);
    if (!s.streamed && summary) out.push({ type: 'reasoning-delta', index: s.block, text: summary });
    s.streamed = true;
    // Held open until the terminal event: its response's `output` is the final word on the item (the SDK's accumulator keeps that one).
    s.item = item;
  } else if (item.type === 'function_call') {
    const s = slot(st, out, st.calls, at, callBlock(item, at));
    const rest = remainder(s, str(item.arguments));
    if (rest) out.push({ type: 'tool-call-delta', index: s.block, argumentsDelta: rest });
    closeBlock(st, out, s);
  } else if (item.type === 'message') {
    // The done item is the whole message: what never streamed (a server that sends it whole, a stream that skipped deltas) is added from it.
    const parts = (Array.isArray(item.content) ? item.content : []).filter(isObject);
    const text = parts.map((p) => (p.type === 'output_text' ? str(p.text) : '')).join('');
    const refusal = parts.map((p) => (p.type === 'refusal' ? str(p.refusal) : '')).join('');
    if (text) fill(out, slot(st, out, st.texts, at, { type: 'text' }), text);
    if (refusal) fill(out, slot(st, out, st.refusals, at, { type: 'text', refusal: true }), refusal);
    closeBlock(st, out, st.texts.get(at));
    closeBlock(st, out, st.refusals.get(at));
  }
}

function onTerminal(st: Stream, out: Chunk[], type: string, response: Json): void {
  st.terminal = { type, response };
  if (isObject(response.usage)) st.usage = toResponsesUsage(response.usage);
  const output = Array.isArray(response.output) ? response.output : [];
  for (const [i, s] of st.reasoning) {
    const final = output[i];
    closeBlock(st, out, s, { provider: 'openai-responses', data: isObject(final) && final.type === 'reasoning' ? final : (s.item ?? {}) });
  }
}

function endChunks(st: Stream, override: Finish | undefined): Chunk[] {
  if (st.ended) return [];
  st.ended = true;
  const out: Chunk[] = [];
  // A reasoning item that came whole keeps its payload even if the response never completed (the step fails; the log still says what came).
  for (const s of st.reasoning.values()) if (s.item) closeBlock(st, out, s, { provider: 'openai-responses', data: s.item });
  for (const index of st.open) out.push({ type: 'block-end', index });
  st.open.clear();
  if (st.usage) out.push({ type: 'usage', usage: st.usage });
  out.push({ type: 'finish', finish: override ?? decide(st) });
  return out;
}

function decide(st: Stream): Finish {
  if (st.failure) return st.failure;
  if (!st.terminal) return { kind: 'error', code: ModelCode.TRANSPORT, message: 'stream ended before response.completed' };
  const r = st.terminal.response;
  if (st.terminal.type === 'response.failed') {
    const err = isObject(r.error) ? r.error : {};
    const message = str(err.message) || 'the response failed';
    return { kind: 'error', code: codeForFrame(str(err.code), message), message };
  }
  if (st.terminal.type === 'response.incomplete') {
    const reason = isObject(r.incomplete_details) ? str(r.incomplete_details.reason) : '';
    if (reason === 'max_output_tokens') return { kind: 'ok', reason: 'length' };
    if (reason === 'content_filter') return { kind: 'ok', reason: 'content-filter' };
    return { kind: 'error', code: ModelCode.UNKNOWN, message: `the response is incomplete (${JSON.stringify(reason)}): the answer may be cut` };
  }
  if (st.calls.size > 0) return { kind: 'ok', reason: 'tool-calls' };
  if (st.refusals.size > 0) return { kind: 'ok', reason: 'refusal' };
  if (st.texts.size > 0) return { kind: 'ok', reason: 'stop' };
  return { kind: 'error', code: ModelCode.EMPTY_RESPONSE, message: 'the model finished with no text and no tool calls' };
}
