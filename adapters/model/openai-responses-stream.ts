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
import type { Finish, Usage } from '../../log/entries.js';
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

export function createResponsesStreamMapper(): ResponsesStreamMapper {
  let next = 0;
  const open = new Set<number>();
  // Per output index: its reasoning, call, text and refusal blocks.
  const reasoning = new Map<number, Slot>();
  const calls = new Map<number, Slot>();
  const texts = new Map<number, Slot>();
  const refusals = new Map<number, Slot>();
  let usage: Usage | undefined;
  let terminal: { type: string; response: Json } | undefined;
  let failure: Finish | undefined;
  let ended = false;
  let heard = false;

  const start = (out: Chunk[], block: Extract<Chunk, { type: 'block-start' }>['block']): Slot => {
    const index = next++;
    open.add(index);
    out.push({ type: 'block-start', index, block });
    return { block: index, streamed: false, sent: '' };
  };
  const close = (out: Chunk[], slot: Slot | undefined, opaque?: Extract<Chunk, { type: 'block-end' }>['opaque']) => {
    if (!slot || !open.has(slot.block)) return;
    open.delete(slot.block);
    out.push(opaque ? { type: 'block-end', index: slot.block, opaque } : { type: 'block-end', index: slot.block });
  };
  const slot = (out: Chunk[], map: Map<number, Slot>, at: number, block: Extract<Chunk, { type: 'block-start' }>['block']): Slot => {
    let s = map.get(at);
    if (!s) map.set(at, (s = start(out, block)));
    return s;
  };
  const callBlock = (item: Json, at: number) => ({ type: 'tool-call' as const, id: str(item.call_id) || str(item.id) || `call_${at}`, name: str(item.name) });

  /** What `full` has beyond what streamed; nothing where the two disagree (what streamed is what the user saw, and stays). */
  const remainder = (s: Slot, full: string): string => (full.startsWith(s.sent) ? full.slice(s.sent.length) : '');
  const fill = (out: Chunk[], s: Slot, full: string) => {
    const rest = remainder(s, full);
    if (!rest) return;
    s.sent += rest;
    out.push({ type: 'text-delta', index: s.block, text: rest });
  };

  function onItemDone(out: Chunk[], item: Json, at: number) {
    if (item.type === 'reasoning') {
      const s = slot(out, reasoning, at, { type: 'reasoning' });
      const summary = summaryOf(item);
      if (!s.streamed && summary) out.push({ type: 'reasoning-delta', index: s.block, text: summary });
      s.streamed = true;
      // Held open until the terminal event: its response's `output` is the final word on the item (the SDK's accumulator keeps that one).
      s.item = item;
    } else if (item.type === 'function_call') {
      const s = slot(out, calls, at, callBlock(item, at));
      const rest = remainder(s, str(item.arguments));
      if (rest) out.push({ type: 'tool-call-delta', index: s.block, argumentsDelta: rest });
      close(out, s);
    } else if (item.type === 'message') {
      // The done item is the whole message: what never streamed (a server that sends it whole, a stream that skipped deltas) is added from it.
      const parts = (Array.isArray(item.content) ? item.content : []).filter(isObject);
      const text = parts.map((p) => (p.type === 'output_text' ? str(p.text) : '')).join('');
      const refusal = parts.map((p) => (p.type === 'refusal' ? str(p.refusal) : '')).join('');
      if (text) fill(out, slot(out, texts, at, { type: 'text' }), text);
      if (refusal) fill(out, slot(out, refusals, at, { type: 'text', refusal: true }), refusal);
      close(out, texts.get(at));
      close(out, refusals.get(at));
    }
  }

  return {
    push(event) {
      const out: Chunk[] = [];
      if (ended || !isObject(event)) return out;
      // The response's first event (`response.created`, as a rule): the step times it (ADR 0079).
      if (!heard) out.push({ type: 'first-chunk' });
      heard = true;
      const at = typeof event.output_index === 'number' ? event.output_index : -1;
      const delta = str(event.delta);
      switch (event.type) {
        case 'response.output_item.added': {
          const item = isObject(event.item) ? event.item : {};
          if (item.type === 'reasoning') slot(out, reasoning, at, { type: 'reasoning' });
          if (item.type === 'function_call') slot(out, calls, at, callBlock(item, at));
          break;
        }
        case 'response.reasoning_summary_text.delta':
        case 'response.reasoning_text.delta': {
          if (!delta) break;
          const s = slot(out, reasoning, at, { type: 'reasoning' });
          const part = typeof event.summary_index === 'number' ? event.summary_index : (s.part ?? 0);
          const text = s.streamed && part !== s.part ? `\n\n${delta}` : delta;
          s.part = part;
          s.streamed = true;
          out.push({ type: 'reasoning-delta', index: s.block, text });
          break;
        }
        case 'response.output_text.delta':
        case 'response.refusal.delta': {
          if (!delta) break;
          const refusal = event.type === 'response.refusal.delta';
          const s = refusal ? slot(out, refusals, at, { type: 'text', refusal: true }) : slot(out, texts, at, { type: 'text' });
          s.streamed = true;
          s.sent += delta;
          out.push({ type: 'text-delta', index: s.block, text: delta });
          break;
        }
        case 'response.function_call_arguments.delta': {
          if (!delta) break;
          const s = slot(out, calls, at, { type: 'tool-call', id: `call_${at}`, name: '' });
          s.streamed = true;
          s.sent += delta;
          out.push({ type: 'tool-call-delta', index: s.block, argumentsDelta: delta });
          break;
        }
        case 'response.output_item.done':
          if (isObject(event.item)) onItemDone(out, event.item, at);
          break;
        case 'response.completed':
        case 'response.incomplete':
        case 'response.failed': {
          const response = isObject(event.response) ? event.response : {};
          terminal = { type: event.type, response };
          if (isObject(response.usage)) usage = toResponsesUsage(response.usage);
          const output = Array.isArray(response.output) ? response.output : [];
          for (const [i, s] of reasoning) {
            const final = output[i];
            close(out, s, { provider: 'openai-responses', data: isObject(final) && final.type === 'reasoning' ? final : (s.item ?? {}) });
          }
          break;
        }
        case 'error': {
          // The code and message at the top level (the API's documented shape) or under `error` (as recorded).
          const body = isObject(event.error) ? event.error : event;
          const message = str(body.message) || 'the provider reported an error';
          failure = { kind: 'error', code: codeForFrame(str(body.code), message), message };
          break;
        }
      }
      return out;
    },

    end(override) {
      if (ended) return [];
      ended = true;
      const out: Chunk[] = [];
      // A reasoning item that came whole keeps its payload even if the response never completed (the step fails; the log still says what came).
      for (const s of reasoning.values()) if (s.item) close(out, s, { provider: 'openai-responses', data: s.item });
      for (const index of open) out.push({ type: 'block-end', index });
      open.clear();
      if (usage) out.push({ type: 'usage', usage });
      out.push({ type: 'finish', finish: override ?? decide() });
      return out;
    },
  };

  function decide(): Finish {
    if (failure) return failure;
    if (!terminal) return { kind: 'error', code: ModelCode.TRANSPORT, message: 'stream ended before response.completed' };
    const r = terminal.response;
    if (terminal.type === 'response.failed') {
      const err = isObject(r.error) ? r.error : {};
      const message = str(err.message) || 'the response failed';
      return { kind: 'error', code: codeForFrame(str(err.code), message), message };
    }
    if (terminal.type === 'response.incomplete') {
      const reason = isObject(r.incomplete_details) ? str(r.incomplete_details.reason) : '';
      if (reason === 'max_output_tokens') return { kind: 'ok', reason: 'length' };
      if (reason === 'content_filter') return { kind: 'ok', reason: 'content-filter' };
      return { kind: 'error', code: ModelCode.UNKNOWN, message: `the response is incomplete (${JSON.stringify(reason)}): the answer may be cut` };
    }
    if (calls.size > 0) return { kind: 'ok', reason: 'tool-calls' };
    if (refusals.size > 0) return { kind: 'ok', reason: 'refusal' };
    if (texts.size > 0) return { kind: 'ok', reason: 'stop' };
    return { kind: 'error', code: ModelCode.EMPTY_RESPONSE, message: 'the model finished with no text and no tool calls' };
  }
}
