import { describe, expect, it } from 'vitest';
import type { Decision } from '../../ports/approval.js';
import { combineDecisions, stricter, stricterPost } from './decisions.js';
import { mulberry32 as rng } from '../../test/sweep/prng.js';

const kinds = ['allow', 'ask', 'deny'] as const;
const gen = (r: () => number, n: number): Decision[] =>
  Array.from({ length: n }, (_, i) => {
    const k = kinds[Math.floor(r() * 3)]!;
    return k === 'allow' ? { kind: 'allow' } : { kind: k, reason: `${k} ${i}` };
  });
const shuffle = <T>(r: () => number, xs: T[]): T[] => {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
};
const rank = { allow: 0, ask: 1, deny: 2 } as const;

describe('combineDecisions (I6: a deny is never reversed)', () => {
  it('is a deny whenever any input is, over 2,000 generated orderings', () => {
    for (let seed = 1; seed <= 2000; seed++) {
      const r = rng(seed);
      const ds = gen(r, 1 + Math.floor(r() * 8));
      const want = ds.some((d) => d.kind === 'deny') ? 'deny' : ds.some((d) => d.kind === 'ask') ? 'ask' : 'allow';
      for (const order of [ds, shuffle(r, ds), [...ds].reverse()]) {
        const got = combineDecisions(order);
        expect(got.kind, `seed ${seed}`).toBe(want);
        // The reason is the first one of the winning kind, in that order.
        if (got.kind !== 'allow') expect(got).toBe(order.find((d) => d.kind === got.kind));
      }
      // Adding anything later never loosens the verdict.
      let acc: Decision = { kind: 'allow' };
      for (const d of ds) {
        const next = stricter(acc, d);
        expect(rank[next.kind], `seed ${seed}`).toBeGreaterThanOrEqual(rank[acc.kind]);
        acc = next;
      }
      expect(acc.kind).toBe(want);
    }
  });

  it('of nothing is an allow', () => {
    expect(combineDecisions([])).toEqual({ kind: 'allow' });
  });

  it('keeps the first block after execute', () => {
    const b1 = { kind: 'block' as const, feedback: 'one' };
    expect(stricterPost(stricterPost({ kind: 'accept' }, b1), { kind: 'block', feedback: 'two' })).toBe(b1);
    expect(stricterPost(b1, { kind: 'accept' })).toBe(b1);
  });
});
