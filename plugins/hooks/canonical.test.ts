import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical.js';

/** canonicalJson as it was before it skipped the replacer: every value through it, a plain object out of order sorted. */
const viaReplacer = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const proto = Object.getPrototypeOf(v) as unknown;
    const keys = Object.keys(v);
    const sorted = keys.every((k, i) => i === 0 || keys[i - 1]! < k);
    return (proto === Object.prototype || proto === null) && sorted ? v : Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  });

describe('canonicalJson', () => {
  it('renders what the replacer alone rendered, for values in order and out of it, at any depth', () => {
    let x = 11;
    const next = () => ((x = (x * 1_103_515_245 + 12_345) % 2 ** 31), x / 2 ** 31);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
    class List extends Array<unknown> {}
    class Thing {
      a = 1;
      b = 2;
    }
    const value = (depth: number): unknown => {
      const leaves = [() => pick(['', 'a', 'é😀', '"\\\n']), () => pick([0, -0, 1.5, 1e21, NaN, Infinity]), () => next() < 0.5, () => null, () => undefined, () => () => 1];
      const keys = ['a', 'b', 'c', 'B', '1', '10', '9', '01', '', 'toJSON2'];
      const nodes = [
        () => Array.from({ length: Math.floor(next() * 4) }, () => value(depth + 1)),
        // Keys in a random order: sorted ones (as most arguments come) half the time.
        () => {
          const ks = Array.from(new Set(Array.from({ length: Math.floor(next() * 4) }, () => pick(keys))));
          if (next() < 0.5) ks.sort();
          return Object.fromEntries(ks.map((k) => [k, value(depth + 1)]));
        },
        () => Object.assign(Object.create(null) as object, { a: value(depth + 1), b: value(depth + 1) }),
        () => new Date(Math.floor(next() * 1e12)),
        () => new Map([[1, 2]]),
        () => {
          const inner = value(depth + 1);
          return { a: 1, toJSON: () => inner };
        },
        () => {
          const own = pick(['an array of its own', { b: 1, a: 2 }]);
          return Object.assign([value(depth + 1)], { toJSON: () => own });
        },
        () => List.of(value(depth + 1), 2),
        () => new Thing(),
        () => Object(pick(['boxed', 1, true])) as unknown,
      ];
      return depth < 4 && next() < 0.6 ? pick(nodes)() : pick(leaves)();
    };
    for (let i = 0; i < 20_000; i++) {
      const v = value(0);
      expect(canonicalJson(v), String(i)).toBe(viaReplacer(v));
    }
  });

  it('renders a deeply nested value as the replacer did, and throws for a cycle as it did', () => {
    let deep: unknown = 'end';
    for (let i = 0; i < 200; i++) deep = i % 2 ? [deep] : { a: i, b: deep };
    expect(canonicalJson(deep)).toBe(viaReplacer(deep));
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = cycle;
    expect(() => canonicalJson(cycle)).toThrow(TypeError);
  });
});
