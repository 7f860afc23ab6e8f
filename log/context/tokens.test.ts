import { describe, expect, it } from 'vitest';
import type { ModelRequest } from '../messages.js';
import { codePoints, estimateRequestTokens, headerChars, messageChars, requestChars, tokensOfChars } from './tokens.js';

describe('the token estimate', () => {
  it('counts code points, so an emoji or a CJK character counts once', () => {
    expect(codePoints('abc')).toBe(3);
    expect(codePoints('😀')).toBe(1);
    expect('😀'.length).toBe(2);
    expect(codePoints('a😀b👍🏽')).toBe(5);
    expect(codePoints('\ud800')).toBe(1); // a lone surrogate is one code point
  });

  it('is a quarter of the serialized request, summed over parts, so an incremental meter agrees exactly', () => {
    const r: ModelRequest = {
      model: 'm',
      system: 'sys',
      tools: [{ name: 't', description: 'd', parameters: {} }],
      messages: [
        { role: 'user', content: 'hello 😀' },
        { role: 'assistant', content: null, toolCalls: [{ id: 'a', name: 't', arguments: '{}' }] },
        { role: 'tool', toolCallId: 'a', content: 'ok' },
      ],
    };
    const parts = headerChars(r) + r.messages.reduce((n, m) => n + messageChars(m), 0);
    expect(requestChars(r)).toBe(parts);
    expect(estimateRequestTokens(r)).toBe(Math.ceil(parts / 4));
    expect(tokensOfChars(0)).toBe(0);
    expect(tokensOfChars(-5)).toBe(0);
  });
});
