import { describe, expect, it } from 'vitest';
import type { ModelMessage, ModelRequest } from '../messages.js';
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

describe('messageChars: a message measured without serializing it', () => {
  /** A small deterministic generator (an LCG), so a failure names a seed that repeats it. */
  const generator = (seed: number) => {
    let x = seed;
    const next = () => ((x = (x * 1_103_515_245 + 12_345) % 2 ** 31), x / 2 ** 31);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
    const units = ['a', 'Z', ' ', '"', '\\', '/', '\n', '\r', '\t', '\b', '\f', '\u0000', '\u0001', '\u001f', '\u007f', 'é', '中', '😀', '\ud800', '\udbff', '\udc00', '\udfff', '\u2028', '\ufeff'];
    const str = () => Array.from({ length: Math.floor(next() * 8) }, () => pick(units)).join('');
    class Thing {
      a = 1;
    }
    const value = (depth: number): unknown => {
      const leaves = [() => str(), () => pick([0, -0, 1, -1.5, 1e21, 1e-7, 0.1, NaN, Infinity, -Infinity, 2 ** 53]), () => next() < 0.5, () => null, () => undefined, () => () => 1, () => Symbol('s')];
      const nodes = [
        () => {
          const a = Array.from({ length: Math.floor(next() * 4) }, () => value(depth + 1));
          if (next() < 0.1) a[a.length + 1] = 'after a hole';
          return a;
        },
        () => Object.fromEntries(Array.from({ length: Math.floor(next() * 4) }, () => [pick([str(), '1', '01', 'toString', '__x'])!, value(depth + 1)])),
        () => Object.assign(Object.create(null) as object, { k: value(depth + 1) }),
        () => new Date(Math.floor(next() * 1e12)),
        () => new Map([[1, 2]]),
        () => {
          const inner = value(depth + 1);
          return { toJSON: () => inner };
        },
        () => new Thing(),
        () => Object.assign([1, 2], { extra: 'not serialized' }),
      ];
      return depth < 4 && next() < 0.5 ? pick(nodes)() : pick(leaves)();
    };
    return { value, str };
  };
  const serialized = (m: unknown) => codePoints(JSON.stringify(m));

  it('is the code points of the message serialized, for every shape of message and any value a reasoning block carries', () => {
    for (let seed = 1; seed <= 4000; seed++) {
      const { value, str } = generator(seed);
      const messages: unknown[] = [
        { role: 'user', content: str() },
        { role: 'tool', toolCallId: str(), content: str() },
        { role: 'assistant', content: str().length % 2 ? null : str(), reasoning: str(), carried: [{ text: str(), provider: 'anthropic', data: value(0) }], toolCalls: [{ id: str(), name: 'n', arguments: str() }] },
        { role: 'assistant', content: value(0), extra: value(0) },
      ];
      for (const m of messages) expect(messageChars(m as ModelMessage), `seed ${seed}: ${JSON.stringify(m)}`).toBe(serialized(m));
    }
  });

  it('measures a deeply nested value as serializing does, and throws for a cycle as serializing does', () => {
    let deep: unknown = 'end';
    for (let i = 0; i < 200; i++) deep = i % 2 ? [deep] : { d: deep };
    const m = { role: 'assistant', content: null, carried: [{ text: '', provider: 'p', data: deep }] };
    expect(messageChars(m as unknown as ModelMessage)).toBe(serialized(m));
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(() => messageChars({ role: 'assistant', content: null, carried: [{ text: '', provider: 'p', data: cycle }] } as unknown as ModelMessage)).toThrow(TypeError);
  });
});
