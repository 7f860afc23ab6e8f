import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fileSeconds } from './file-durations.js';
import { longestFirst } from './longest-first.js';

describe('longest-first test order', () => {
  it('starts known files longest first and keeps the fallback order of the rest after them', () => {
    const seconds = new Map([['slow.ts', 90], ['mid.ts', 20]]);
    const order = longestFirst(['a.ts', 'mid.ts', 'b.ts', 'slow.ts', 'c.ts'], (p) => p, seconds);
    expect(order).toEqual(['slow.ts', 'mid.ts', 'a.ts', 'b.ts', 'c.ts']);
  });

  it('names only test files that exist, so a renamed slow file does not lose its place unnoticed', () => {
    const missing = [...fileSeconds.keys()].filter((path) => !path.endsWith('.test.ts') || !existsSync(path));
    expect(missing).toEqual([]);
    expect(fileSeconds.size).toBeGreaterThan(10);
  });
});
