/**
 * OpenAI stream chunks → bridle's chunk protocol. A small stateful mapper,
 * free of I/O, so the rules of I8 are decided here and tested without a server.
 *
 * The wire is untrusted: the SDK only parses the JSON, so every field is
 * read by shape, never by its declared type (a chunk that holds nothing
 * recognisable adds nothing). What real providers send beyond OpenAI's
 * shape is read as they meant it (NOTES.md, "Provider streams"; ADR 0012).
 */
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { Chunk } from '../../log/chunks.js';
import type { Finish, FinishReason, ModelErrorCode, Usage } from '../../log/entry-values.js';
import { ModelCode } from '../../log/entry-values.js';

export interface StreamMapper {
  /** The chunks one wire chunk yields; blocks start lazily, on first content. */
  push(wire: ChatCompletionChunk): Chunk[];
  /**
   * The closing chunks: `block-end` for every open block, the usage if any,
   * then the one `finish`. `override` (an error, an abort) wins over what
   * the stream itself said.
   */
  end(override?: Finish): Chunk[];
}

interface PendingCall {
  /** The id used when the server gives none: `call_<index>`, or `call_<n>` for the n-th call of a server that sends no index. */
  fallbackId: string;
  block?: number;
  id?: string;
  name?: string;
  /** Argument text that arrived before the call could open (no name yet). */
  buffered: string;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** A token count from the wire as a safe non-negative integer: junk is 0, a huge count is capped (the log's schema takes nothing else). */
export const safeCount = (n: unknown): number => (typeof n === 'number' && n > 0 ? Math.min(Math.trunc(n), Number.MAX_SAFE_INTEGER) : 0);

/** The usage object of a chunk: top-level `usage`, or Groq's `x_groq.usage`. */
function usageOf(wire: Json): Json | undefined {
  if (isObject(wire.usage)) return wire.usage;
  const groq = wire.x_groq;
  return isObject(groq) && isObject(groq.usage) ? groq.usage : undefined;
}

export function toUsage(u: Json): Usage {
  const usage: Usage = { inputTokens: safeCount(u.prompt_tokens), outputTokens: safeCount(u.completion_tokens) };
  const completion = isObject(u.completion_tokens_details) ? u.completion_tokens_details : {};
  const prompt = isObject(u.prompt_tokens_details) ? u.prompt_tokens_details : {};
  const reasoning = completion.reasoning_tokens;
  // DeepSeek reports cache hits as `prompt_cache_hit_tokens` instead of the details object.
  const cached = prompt.cached_tokens ?? u.prompt_cache_hit_tokens;
  if (reasoning !== undefined && reasoning !== null) usage.reasoningTokens = safeCount(reasoning);
  if (cached !== undefined && cached !== null) usage.cachedTokens = safeCount(cached);
  return usage;
}

export type ReadReason = { kind: 'ok'; reason: FinishReason } | { kind: 'error'; code: ModelErrorCode; message: string };

const CLEAN: Record<string, FinishReason> = {
  stop: 'stop',
  // Other servers' names for the same endings: Anthropic-style gateways, TGI, Mistral.
  end_turn: 'stop',
  stop_sequence: 'stop',
  eos: 'stop',
  eos_token: 'stop',
  tool_calls: 'tool-calls',
  function_call: 'tool-calls',
  tool_use: 'tool-calls',
  length: 'length',
  max_tokens: 'length',
  model_length: 'length',
  content_filter: 'content-filter',
};

/**
 * A wire finish reason → bridle's, or the failure it reports. Only reasons
 * known to mean a finished answer are a clean stop: the provider's own
 * "I cut it" (DeepSeek's `insufficient_system_resource`, Mistral's `error`)
 * is `SERVER`, and a reason nobody taught us is `UNKNOWN` — never `stop`,
 * since an answer we cannot vouch for must not end a turn as completed.
 * Contract: pure and total.
 */
export function readFinishReason(raw: string): ReadReason {
  const known = Object.hasOwn(CLEAN, raw) ? CLEAN[raw] : undefined;
  if (known) return { kind: 'ok', reason: known };
  if (raw === 'insufficient_system_resource' || raw === 'error') {
    return { kind: 'error', code: ModelCode.SERVER, message: `the provider cut the answer short (finish reason ${raw})` };
  }
  return { kind: 'error', code: ModelCode.UNKNOWN, message: `unknown finish reason ${JSON.stringify(raw)}: the answer may be incomplete` };
}

/** Reasoning text of a delta: `reasoning_content` (DeepSeek, vLLM) or `reasoning` (newer vLLM, Ollama, OpenRouter, Groq). */
const reasoningOf = (d: Json): string => str(d.reasoning_content) || str(d.reasoning);

/** What a content part array (Mistral magistral) holds, in order: `text` parts and the text inside `thinking` parts. */
function partsOf(content: unknown[]): { kind: 'text' | 'reasoning'; text: string }[] {
  const out: { kind: 'text' | 'reasoning'; text: string }[] = [];
  for (const part of content) {
    if (!isObject(part)) continue;
    if (part.type === 'text' && str(part.text)) out.push({ kind: 'text', text: str(part.text) });
    if (part.type !== 'thinking') continue;
    const inner = typeof part.thinking === 'string' ? [{ type: 'text', text: part.thinking }] : Array.isArray(part.thinking) ? part.thinking : [];
    for (const t of inner) if (isObject(t) && t.type === 'text' && str(t.text)) out.push({ kind: 'reasoning', text: str(t.text) });
  }
  return out;
}

/** Choice 0 of a chunk: with `n > 1` the choices interleave in one stream, and only the first is the answer. A lone choice without an index is it. */
function choiceZero(wire: Json): Json | undefined {
  if (!Array.isArray(wire.choices)) return undefined;
  return wire.choices.find((c): c is Json => isObject(c) && (c.index === 0 || c.index === undefined || c.index === null));
}

type BlockStart = Extract<Chunk, { type: 'block-start' }>['block'];

/** What the handlers of one response share: its blocks (one text, one refusal, one reasoning, a block a call), and its finish reason. */
interface Stream {
  nextBlock: number;
  textBlock: number | undefined;
  refusalBlock: number | undefined;
  reasoningBlock: number | undefined;
  calls: Map<string, PendingCall>;
  /** The key of the last call that came without an index. */
  lastUnindexed: string | undefined;
  open: number[];
  usage: Usage | undefined;
  rawReason: string | undefined;
  ended: boolean;
  heard: boolean;
}

export function createStreamMapper(): StreamMapper {
  const st: Stream = { nextBlock: 0, textBlock: undefined, refusalBlock: undefined, reasoningBlock: undefined, calls: new Map(), lastUnindexed: undefined, open: [], usage: undefined, rawReason: undefined, ended: false, heard: false };
  return {
    push(chunk) {
      const out: Chunk[] = [];
      const wire = chunk as unknown;
      if (st.ended || !isObject(wire)) return out;
      // The response's first chunk, whatever it holds (a role, nothing yet): the step times it (ADR 0079).
      if (!st.heard) out.push({ type: 'first-chunk' });
      st.heard = true;
      const u = usageOf(wire);
      if (u) st.usage = toUsage(u);
      const choice = choiceZero(wire);
      if (choice) onChoice(st, out, choice);
      return out;
    },
    end: (override) => endChunks(st, override),
  };
}

function onChoice(st: Stream, out: Chunk[], choice: Json): void {
  const delta = isObject(choice.delta) ? choice.delta : {};
  const thought = reasoningOf(delta);
  if (thought) appendReasoning(st, out, thought);
  if (typeof delta.content === 'string' && delta.content) appendText(st, out, delta.content);
  if (Array.isArray(delta.content)) for (const p of partsOf(delta.content)) (p.kind === 'text' ? appendText : appendReasoning)(st, out, p.text);
  // OpenAI sends a refusal as its own field, with no content: what the model said, kept apart from any answer text.
  if (str(delta.refusal)) {
    st.refusalBlock ??= startBlock(st, out, { type: 'text', refusal: true });
    out.push({ type: 'text-delta', index: st.refusalBlock, text: str(delta.refusal) });
  }
  if (Array.isArray(delta.tool_calls)) delta.tool_calls.forEach((tc, i) => isObject(tc) && pushToolCall(st, out, i, tc));
  if (str(choice.finish_reason)) st.rawReason = str(choice.finish_reason);
}

function startBlock(st: Stream, out: Chunk[], block: BlockStart): number {
  const index = st.nextBlock++;
  st.open.push(index);
  out.push({ type: 'block-start', index, block });
  return index;
}

function appendText(st: Stream, out: Chunk[], piece: string): void {
  st.textBlock ??= startBlock(st, out, { type: 'text' });
  out.push({ type: 'text-delta', index: st.textBlock, text: piece });
}

function appendReasoning(st: Stream, out: Chunk[], piece: string): void {
  st.reasoningBlock ??= startBlock(st, out, { type: 'reasoning' });
  out.push({ type: 'reasoning-delta', index: st.reasoningBlock, text: piece });
}

/**
 * Which call a fragment belongs to: by `index` when the server sends one;
 * without it (Mistral, some Gemini and vLLM versions) a fragment naming an
 * id not seen yet opens a call, and one without an id continues the last.
 */
function keyOf(st: Stream, tc: Json, position: number): string {
  if (typeof tc.index === 'number') return `index ${tc.index}`;
  const id = str(tc.id);
  if (id) return (st.lastUnindexed = `id ${id}`);
  return st.lastUnindexed ?? `position ${position}`;
}

function pushToolCall(st: Stream, out: Chunk[], position: number, tc: Json): void {
  const key = keyOf(st, tc, position);
  let call = st.calls.get(key);
  if (!call) st.calls.set(key, (call = { fallbackId: `call_${typeof tc.index === 'number' ? tc.index : st.calls.size}`, buffered: '' }));
  const fn = isObject(tc.function) ? tc.function : {};
  // Some servers repeat id and name on every fragment: the first one wins.
  if (call.id === undefined && str(tc.id)) call.id = str(tc.id);
  if (call.name === undefined && str(fn.name)) call.name = str(fn.name);
  const args = str(fn.arguments);
  if (call.block === undefined) {
    call.buffered += args;
    if (call.name === undefined) return;
    call.block = startBlock(st, out, { type: 'tool-call', id: call.id ?? call.fallbackId, name: call.name });
    if (call.buffered) out.push({ type: 'tool-call-delta', index: call.block, argumentsDelta: call.buffered });
    call.buffered = '';
  } else if (args) {
    out.push({ type: 'tool-call-delta', index: call.block, argumentsDelta: args });
  }
}

function endChunks(st: Stream, override: Finish | undefined): Chunk[] {
  if (st.ended) return [];
  st.ended = true;
  const out: Chunk[] = [];
  // A call whose name never came still goes out, so the harness can reject it by name.
  for (const call of st.calls.values()) {
    if (call.block !== undefined) continue;
    call.block = startBlock(st, out, { type: 'tool-call', id: call.id ?? call.fallbackId, name: '' });
    if (call.buffered) out.push({ type: 'tool-call-delta', index: call.block, argumentsDelta: call.buffered });
  }
  for (const index of st.open) out.push({ type: 'block-end', index });
  if (st.usage) out.push({ type: 'usage', usage: st.usage });
  out.push({ type: 'finish', finish: override ?? decide(st) });
  return out;
}

function decide(st: Stream): Finish {
  const { rawReason } = st;
  if (rawReason === undefined) {
    return { kind: 'error', code: ModelCode.TRANSPORT, message: 'stream ended without a finish reason' };
  }
  const read = readFinishReason(rawReason);
  if (read.kind === 'error') return read;
  let reason = read.reason;
  const calls = st.calls.size;
  // Servers that answer tool calls with `stop` (some Ollama versions) are read by what the answer holds.
  if (reason === 'stop' && calls > 0) reason = 'tool-calls';
  if (reason === 'stop' && st.refusalBlock !== undefined) reason = 'refusal';
  // `length` and `content-filter` say more than "empty" about an answer with nothing in it.
  if (st.textBlock === undefined && st.refusalBlock === undefined && calls === 0 && (reason === 'stop' || reason === 'tool-calls')) {
    return { kind: 'error', code: ModelCode.EMPTY_RESPONSE, message: `the model finished (${rawReason}) with no text and no tool calls` };
  }
  return { kind: 'ok', reason };
}
