import { describe, expect, test } from 'vitest';
import { toWireMessages, toWireParams, toWireTools } from './openai-wire.js';

describe('toWireMessages', () => {
  test('system first, then the conversation in order', () => {
    const wire = toWireMessages({
      system: 'sys',
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'thinking aloud', reasoning: 'r', toolCalls: [{ id: 'c1', name: 'ls', arguments: '{}' }, { id: 'c2', name: 'cat', arguments: '{"p":1}' }] },
        { role: 'tool', toolCallId: 'c1', content: 'a b' },
        { role: 'tool', toolCallId: 'c2', content: 'x' },
        { role: 'assistant', content: 'done' },
      ],
    });
    expect(wire).toEqual([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'q' },
      {
        role: 'assistant',
        content: 'thinking aloud',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'ls', arguments: '{}' } },
          { id: 'c2', type: 'function', function: { name: 'cat', arguments: '{"p":1}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'a b' },
      { role: 'tool', tool_call_id: 'c2', content: 'x' },
      { role: 'assistant', content: 'done' },
    ]);
  });

  test('no system message when the prompt is empty; a null assistant text without calls becomes ""', () => {
    expect(toWireMessages({ system: '', messages: [{ role: 'assistant', content: null, toolCalls: [] }] })).toEqual([
      { role: 'assistant', content: '' },
    ]);
  });

  test('reasoning is never sent back', () => {
    const wire = toWireMessages({ system: '', messages: [{ role: 'assistant', content: 'a', reasoning: 'secret' }] });
    expect(JSON.stringify(wire)).not.toContain('secret');
  });
});

describe('toWireTools (I7)', () => {
  test('keeps only name, description, parameters', () => {
    const extra = { name: 'n', description: 'd', parameters: { type: 'object' }, strict: true, handler: 'x' };
    expect(toWireTools([extra])).toEqual([{ type: 'function', function: { name: 'n', description: 'd', parameters: { type: 'object' } } }]);
  });
});

describe('toWireParams', () => {
  const base = { model: '', system: '', tools: [], messages: [{ role: 'user' as const, content: 'x' }] };
  test('falls back to the provider model; omits empty tools and unset params', () => {
    expect(toWireParams(base, 'fallback')).toEqual({
      model: 'fallback',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
      stream_options: { include_usage: true },
    });
  });
  test('the request model wins; temperature 0 is kept', () => {
    const p = toWireParams({ ...base, model: 'm', temperature: 0, maxTokens: 9 }, 'fallback');
    expect(p).toMatchObject({ model: 'm', temperature: 0, max_tokens: 9 });
  });
});
