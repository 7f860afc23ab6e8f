import { describe, expect, it } from 'vitest';
import { mulberry32, rngFor, seedOf } from './prng.js';

describe('the sweep PRNG', () => {
  it('is deterministic and spreads over [0, 1)', () => {
    const a = mulberry32(42);
    const b = mulberry32(42);
    const xs = Array.from({ length: 1000 }, () => a());
    expect(xs).toEqual(Array.from({ length: 1000 }, () => b()));
    expect(Math.min(...xs)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...xs)).toBeLessThan(1);
    expect(xs.filter((x) => x < 0.5).length).toBeGreaterThan(400);
  });

  it('seeds subjects apart', () => {
    expect(seedOf(1, 'request', 0)).not.toBe(seedOf(1, 'request', 1));
    expect(seedOf(1, 'request', 0)).toBe(seedOf(1, 'request', 0));
    const r = rngFor(7, 'x');
    for (let i = 0; i < 100; i++) expect(r.int(2, 4)).toBeGreaterThanOrEqual(2);
  });
});
