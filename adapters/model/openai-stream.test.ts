import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { describe, expect, test } from 'vitest';
import { chunk, usageChunk } from '../../test/helpers/openai-chunks.js';
import { checkChunks } from '../../test/helpers/model-stream.js';
import { assembleAll, type Chunk } from '../../log/chunks.js';
import { Usage } from '../../log/entry-values.js';
import { safeCount, createStreamMapper, readFinishReason } from './openai-stream.js';

function map(wire: object[], override?: Parameters<ReturnType<typeof createStreamMapper>['end']>[0]): Chunk[] {
  const m = createStreamMapper();
  const out = wire.flatMap((w) => m.push(w as ChatCompletionChunk));
  out.push(...m.end(override));
  expect(checkChunks(out)).toEqual([]);
  return out;
}
const tc = (index: number | undefined, fn: { name?: string; arguments?: string }, id?: string) => ({
  ...(index === undefined ? {} : { index }),
  ...(id ? { id, type: 'function' } : {}),
  function: fn,
});

describe('createStreamMapper', () => {
  test('blocks start lazily: an empty role chunk opens nothing, and is the response’s first chunk (ADR 0079)', () => {
    const out = map([chunk({ role: 'assistant', content: '' }), chunk({ content: 'x' }), chunk({}, 'stop')]);
    expect(out).toEqual([
      { type: 'first-chunk' },
      { type: 'block-start', index: 0, block: { type: 'text' } },
      { type: 'text-delta', index: 0, text: 'x' },
      { type: 'block-end', index: 0 },
      { type: 'finish', finish: { kind: 'ok', reason: 'stop' } },
    ]);
  });

  test('repeated id and name on every fragment do not restart or rename the call', () => {
    const out = map([
      chunk({ tool_calls: [tc(0, { name: 'ls', arguments: '{"a"' }, 'c1')] }),
      chunk({ tool_calls: [tc(0, { name: 'ls', arguments: ':1}' }, 'c1')] }),
      chunk({}, 'tool_calls'),
    ]);
    expect(assembleAll(out).blocks).toEqual([{ type: 'tool-call', id: 'c1', name: 'ls', arguments: '{"a":1}' }]);
  });

  test('arguments before the name are buffered; a missing index falls back to the array position', () => {
    const out = map([
      chunk({ tool_calls: [tc(undefined, { arguments: '{"x"' }, 'c9')] }),
      chunk({ tool_calls: [tc(undefined, { name: 'grep', arguments: ':2}' })] }),
      chunk({}, 'tool_calls'),
    ]);
    expect(assembleAll(out).blocks).toEqual([{ type: 'tool-call', id: 'c9', name: 'grep', arguments: '{"x":2}' }]);
  });

  test('a call whose name never came is still emitted (the harness rejects it), with a generated id', () => {
    const out = map([chunk({ tool_calls: [tc(3, { arguments: '{}' })] }), chunk({}, 'tool_calls')]);
    expect(assembleAll(out).blocks).toEqual([{ type: 'tool-call', id: 'call_3', name: '', arguments: '{}' }]);
  });

  test('a whole call in one fragment (Ollama style) with finish "stop" reads as tool-calls', () => {
    const out = map([chunk({ tool_calls: [tc(0, { name: 'ls', arguments: '{}' }, 'c1')] }, 'stop')]);
    expect(out.at(-1)).toEqual({ type: 'finish', finish: { kind: 'ok', reason: 'tool-calls' } });
  });

  test('`reasoning` (newer vLLM / Ollama) is read like `reasoning_content`', () => {
    const out = map([chunk({ reasoning: 'hmm' }), chunk({ content: 'ok' }, 'stop')]);
    expect(assembleAll(out).blocks).toEqual([{ type: 'reasoning', text: 'hmm' }, { type: 'text', text: 'ok' }]);
  });

  test('usage on a chunk that also has choices is kept; DeepSeek cache hits read as cachedTokens', () => {
    const withUsage = { ...chunk({ content: 'a' }, 'stop'), usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4, prompt_cache_hit_tokens: 2 } };
    expect(assembleAll(map([withUsage])).usage).toEqual({ inputTokens: 3, outputTokens: 1, cachedTokens: 2 });
    expect(assembleAll(map([chunk({ content: 'a' }, 'stop'), usageChunk({ prompt_tokens: 1, completion_tokens: 1 })])).usage).toEqual({
      inputTokens: 1,
      outputTokens: 1,
    });
  });

  test('an override finish wins and still closes open blocks', () => {
    const out = map([chunk({ content: 'a' }, 'stop')], { kind: 'aborted' });
    expect(out.slice(-2)).toEqual([{ type: 'block-end', index: 0 }, { type: 'finish', finish: { kind: 'aborted' } }]);
  });

  test('reasoning-only with length is ok/length, with stop it is EMPTY_RESPONSE', () => {
    expect(map([chunk({ reasoning_content: 'r' }, 'length')]).at(-1)).toEqual({ type: 'finish', finish: { kind: 'ok', reason: 'length' } });
    expect(map([chunk({ reasoning_content: 'r' }, 'stop')]).at(-1)).toMatchObject({ finish: { code: 'EMPTY_RESPONSE' } });
  });

  test('a chunk without choices (or with junk) does not throw; end is idempotent', () => {
    const m = createStreamMapper();
    expect(m.push({} as ChatCompletionChunk)).toEqual([{ type: 'first-chunk' }]);
    expect(m.push(null as unknown as ChatCompletionChunk)).toEqual([]);
    expect(m.end()).toHaveLength(1);
    expect(m.end()).toEqual([]);
  });
});

test('readFinishReason', () => {
  expect(readFinishReason('function_call')).toEqual({ kind: 'ok', reason: 'tool-calls' });
  expect(readFinishReason('content_filter')).toEqual({ kind: 'ok', reason: 'content-filter' });
  expect(readFinishReason('eos')).toEqual({ kind: 'ok', reason: 'stop' });
  expect(readFinishReason('toString')).toMatchObject({ kind: 'error', code: 'UNKNOWN' });
});

describe('provider quirks (NOTES.md, "Provider streams")', () => {
  test('DeepSeek insufficient_system_resource is a cut answer (SERVER), never a clean stop', () => {
    const out = map([chunk({ content: 'The answer is' }), chunk({}, 'insufficient_system_resource')]);
    expect(out.at(-1)).toEqual({
      type: 'finish',
      finish: { kind: 'error', code: 'SERVER', message: 'the provider cut the answer short (finish reason insufficient_system_resource)' },
    });
    expect(assembleAll(out).blocks).toEqual([{ type: 'text', text: 'The answer is' }]);
  });

  test('an unknown finish reason is UNKNOWN, never a clean stop, with or without tool calls', () => {
    const message = 'unknown finish reason "sleepy": the answer may be incomplete';
    expect(map([chunk({ content: 'hm' }, 'sleepy')]).at(-1)).toEqual({ type: 'finish', finish: { kind: 'error', code: 'UNKNOWN', message } });
    expect(map([chunk({ tool_calls: [tc(0, { name: 'ls', arguments: '{}' }, 'c1')] }, 'sleepy')]).at(-1)).toMatchObject({ finish: { code: 'UNKNOWN' } });
  });

  test('finish reasons other servers use for a clean stop, a cut and a call keep their meaning', () => {
    for (const raw of ['end_turn', 'stop_sequence', 'eos_token']) expect(map([chunk({ content: 'a' }, raw)]).at(-1)).toMatchObject({ finish: { kind: 'ok', reason: 'stop' } });
    for (const raw of ['max_tokens', 'model_length']) expect(map([chunk({ content: 'a' }, raw)]).at(-1)).toMatchObject({ finish: { kind: 'ok', reason: 'length' } });
    expect(map([chunk({ tool_calls: [tc(0, { name: 'ls', arguments: '{}' }, 'c1')] }, 'tool_use')]).at(-1)).toMatchObject({ finish: { reason: 'tool-calls' } });
    expect(map([chunk({ content: 'a' }, 'error')]).at(-1)).toMatchObject({ finish: { kind: 'error', code: 'SERVER' } });
  });

  test('Groq usage under x_groq.usage (no top-level usage) is read', () => {
    const last = { ...chunk({}, 'stop'), x_groq: { id: 'req_1', usage: { prompt_tokens: 45, completion_tokens: 662, total_tokens: 707, queue_time: 0.04 } } };
    expect(assembleAll(map([chunk({ content: 'hi' }), last])).usage).toEqual({ inputTokens: 45, outputTokens: 662 });
  });

  test('tool-call deltas without index: each new id is a new call, an id-less delta continues the last one', () => {
    const out = map([
      chunk({ tool_calls: [tc(undefined, { name: 'ls', arguments: '{"path":' }, 'a1')] }),
      chunk({ tool_calls: [tc(undefined, { arguments: '"."}' })] }),
      chunk({ tool_calls: [tc(undefined, { name: 'grep', arguments: '{"pattern":"x"}' }, 'b2')] }),
      chunk({}, 'tool_calls'),
    ]);
    expect(assembleAll(out).blocks).toEqual([
      { type: 'tool-call', id: 'a1', name: 'ls', arguments: '{"path":"."}' },
      { type: 'tool-call', id: 'b2', name: 'grep', arguments: '{"pattern":"x"}' },
    ]);
  });

  test('only choice 0 is read: a chunk carrying choice 1 alone adds nothing, and its finish reason is not ours', () => {
    const second = (delta: Record<string, unknown>, finish: string | null = null) => ({ ...chunk(delta), choices: [{ index: 1, delta, logprobs: null, finish_reason: finish }] });
    const out = map([chunk({ content: 'zero' }), second({ content: 'one' }), chunk({}, 'stop'), second({}, 'length')]);
    expect(assembleAll(out).blocks).toEqual([{ type: 'text', text: 'zero' }]);
    expect(out.at(-1)).toEqual({ type: 'finish', finish: { kind: 'ok', reason: 'stop' } });
  });

  test('a refusal is kept as refusal-marked text and the answer ends with reason refusal', () => {
    const out = map([chunk({ role: 'assistant', content: null, refusal: '' }), chunk({ refusal: "I can't" }), chunk({ refusal: ' help.' }), chunk({}, 'stop')]);
    expect(assembleAll(out).blocks).toEqual([{ type: 'text', text: "I can't help.", refusal: true }]);
    expect(out.at(-1)).toEqual({ type: 'finish', finish: { kind: 'ok', reason: 'refusal' } });
  });

  test('content as an array of parts (Mistral magistral): text parts are text, thinking parts reasoning, in order', () => {
    const out = map([
      chunk({ content: [{ type: 'thinking', thinking: [{ type: 'text', text: 'think ' }, { type: 'text', text: 'more' }] }] }),
      chunk({ content: [{ type: 'text', text: '4' }, { type: 'reference', reference_ids: [1] }] }),
      chunk({ content: '' }, 'stop'),
    ]);
    expect(assembleAll(out).blocks).toEqual([{ type: 'reasoning', text: 'think more' }, { type: 'text', text: '4' }]);
  });

  test('junk shapes inside a chunk (choices, delta, tool_calls, parts of the wrong type) are skipped, never thrown', () => {
    const m = createStreamMapper();
    for (const junk of [{ choices: 'x' }, { choices: [null, 3] }, { choices: [{ index: 0, delta: null }] }, { choices: [{ index: 0, delta: { tool_calls: {}, content: [null, 7, { type: 'text' }] } }] }]) {
      expect(() => m.push(junk as never)).not.toThrow();
    }
    expect(m.end()).toEqual([{ type: 'finish', finish: { kind: 'error', code: 'TRANSPORT', message: 'stream ended without a finish reason' } }]);
  });
});

describe('untrusted numbers', () => {
  test('usage counts out of range (1e308, negative, fractional, strings, NaN) become safe non-negative integers the log accepts', () => {
    const hostile = { prompt_tokens: 1e308, completion_tokens: -5, completion_tokens_details: { reasoning_tokens: 2.9 }, prompt_tokens_details: { cached_tokens: 'lots' } };
    const u = assembleAll(map([chunk({ content: 'a' }, 'stop'), { ...usageChunk({ prompt_tokens: 0, completion_tokens: 0 }), usage: hostile }])).usage!;
    expect(u).toEqual({ inputTokens: Number.MAX_SAFE_INTEGER, outputTokens: 0, reasoningTokens: 2, cachedTokens: 0 });
    expect(Usage.safeParse(u).success).toBe(true);
    expect([safeCount(Number.NaN), safeCount(Infinity), safeCount('7'), safeCount(null)]).toEqual([0, Number.MAX_SAFE_INTEGER, 0, 0]);
  });
});
