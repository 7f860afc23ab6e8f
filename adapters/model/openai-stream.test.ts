import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { describe, expect, test } from 'vitest';
import { chunk, usageChunk } from '../../test/helpers/openai-chunks.js';
import { checkChunks } from '../../test/helpers/model-stream.js';
import { assembleAll, type Chunk } from '../../log/chunks.js';
import { createStreamMapper, toFinishReason } from './openai-stream.js';

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
  test('blocks start lazily: an empty role chunk opens nothing', () => {
    const out = map([chunk({ role: 'assistant', content: '' }), chunk({ content: 'x' }), chunk({}, 'stop')]);
    expect(out).toEqual([
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
    expect(m.push({} as ChatCompletionChunk)).toEqual([]);
    expect(m.end()).toHaveLength(1);
    expect(m.end()).toEqual([]);
  });
});

test('toFinishReason', () => {
  expect(toFinishReason('function_call', false)).toBe('tool-calls');
  expect(toFinishReason('content_filter', false)).toBe('content-filter');
  expect(toFinishReason('eos', false)).toBe('stop');
  expect(toFinishReason('eos', true)).toBe('tool-calls');
});
