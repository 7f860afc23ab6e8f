/**
 * OpenAI stream chunks → bridle's chunk protocol. A small stateful mapper,
 * free of I/O, so the rules of I8 are decided here and tested without a server.
 */
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { CompletionUsage } from 'openai/resources/completions';
import type { Chunk } from '../../log/chunks.js';
import type { Finish, FinishReason, Usage } from '../../log/entries.js';

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
  block?: number;
  id?: string;
  name?: string;
  /** Argument text that arrived before the call could open (no name yet). */
  buffered: string;
}

const count = (n: unknown): number => (typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.trunc(n) : 0);

export function toUsage(u: CompletionUsage): Usage {
  const usage: Usage = { inputTokens: count(u.prompt_tokens), outputTokens: count(u.completion_tokens) };
  const reasoning = u.completion_tokens_details?.reasoning_tokens;
  // DeepSeek reports cache hits as `prompt_cache_hit_tokens` instead of the details object.
  const cached = u.prompt_tokens_details?.cached_tokens ?? (u as { prompt_cache_hit_tokens?: number }).prompt_cache_hit_tokens;
  if (reasoning !== undefined && reasoning !== null) usage.reasoningTokens = count(reasoning);
  if (cached !== undefined && cached !== null) usage.cachedTokens = count(cached);
  return usage;
}

/**
 * A wire finish reason → bridle's. Servers that answer tool calls with
 * `stop` (some Ollama versions) and reasons outside the OpenAI set are read
 * by what the answer holds.
 */
export function toFinishReason(raw: string, hasToolCalls: boolean): FinishReason {
  switch (raw) {
    case 'tool_calls':
    case 'function_call':
      return 'tool-calls';
    case 'length':
      return 'length';
    case 'content_filter':
      return 'content-filter';
    default:
      return hasToolCalls ? 'tool-calls' : 'stop';
  }
}

/** Reasoning text of a delta: `reasoning_content` (DeepSeek, vLLM) or `reasoning` (newer vLLM, Ollama, OpenRouter). */
function reasoningOf(delta: object): string {
  const d = delta as { reasoning_content?: unknown; reasoning?: unknown };
  if (typeof d.reasoning_content === 'string') return d.reasoning_content;
  if (typeof d.reasoning === 'string') return d.reasoning;
  return '';
}

export function createStreamMapper(): StreamMapper {
  let nextBlock = 0;
  let textBlock: number | undefined;
  let reasoningBlock: number | undefined;
  const calls = new Map<number, PendingCall>();
  const open: number[] = [];
  let usage: Usage | undefined;
  let rawReason: string | undefined;
  let ended = false;

  const start = (out: Chunk[], block: Extract<Chunk, { type: 'block-start' }>['block']): number => {
    const index = nextBlock++;
    open.push(index);
    out.push({ type: 'block-start', index, block });
    return index;
  };

  const pushToolCall = (out: Chunk[], position: number, tc: NonNullable<ChatCompletionChunk.Choice.Delta['tool_calls']>[number]) => {
    const key = typeof tc.index === 'number' ? tc.index : position;
    let call = calls.get(key);
    if (!call) calls.set(key, (call = { buffered: '' }));
    // Some servers repeat id and name on every fragment: the first one wins.
    if (call.id === undefined && tc.id) call.id = tc.id;
    if (call.name === undefined && tc.function?.name) call.name = tc.function.name;
    const args = tc.function?.arguments ?? '';
    if (call.block === undefined) {
      call.buffered += args;
      if (call.name === undefined) return;
      call.block = start(out, { type: 'tool-call', id: call.id ?? `call_${key}`, name: call.name });
      if (call.buffered) out.push({ type: 'tool-call-delta', index: call.block, argumentsDelta: call.buffered });
      call.buffered = '';
    } else if (args) {
      out.push({ type: 'tool-call-delta', index: call.block, argumentsDelta: args });
    }
  };

  return {
    push(wire) {
      const out: Chunk[] = [];
      if (ended) return out;
      if (wire.usage) usage = toUsage(wire.usage);
      const choice = wire.choices?.find((c) => c.index === 0) ?? wire.choices?.[0];
      if (!choice) return out;
      const delta = choice.delta ?? {};
      const reasoning = reasoningOf(delta);
      if (reasoning) {
        reasoningBlock ??= start(out, { type: 'reasoning' });
        out.push({ type: 'reasoning-delta', index: reasoningBlock, text: reasoning });
      }
      if (typeof delta.content === 'string' && delta.content) {
        textBlock ??= start(out, { type: 'text' });
        out.push({ type: 'text-delta', index: textBlock, text: delta.content });
      }
      delta.tool_calls?.forEach((tc, i) => pushToolCall(out, i, tc));
      if (choice.finish_reason) rawReason = choice.finish_reason;
      return out;
    },

    end(override) {
      if (ended) return [];
      ended = true;
      const out: Chunk[] = [];
      // A call whose name never came still goes out, so the harness can reject it by name.
      for (const [key, call] of calls) {
        if (call.block !== undefined) continue;
        call.block = start(out, { type: 'tool-call', id: call.id ?? `call_${key}`, name: '' });
        if (call.buffered) out.push({ type: 'tool-call-delta', index: call.block, argumentsDelta: call.buffered });
      }
      for (const index of open) out.push({ type: 'block-end', index });
      if (usage) out.push({ type: 'usage', usage });
      out.push({ type: 'finish', finish: override ?? decide() });
      return out;
    },
  };

  function decide(): Finish {
    if (rawReason === undefined) {
      return { kind: 'error', code: 'TRANSPORT', message: 'stream ended without a finish reason' };
    }
    const reason = toFinishReason(rawReason, calls.size > 0);
    // `length` and `content-filter` say more than "empty" about an answer with nothing in it.
    if (textBlock === undefined && calls.size === 0 && (reason === 'stop' || reason === 'tool-calls')) {
      return { kind: 'error', code: 'EMPTY_RESPONSE', message: `the model finished (${rawReason}) with no text and no tool calls` };
    }
    return { kind: 'ok', reason };
  }
}
