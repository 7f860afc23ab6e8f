import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LIST_PRICES } from '../bundles/prices.js';
import { costOf, priceFor, usdOf } from './cost.js';
import type { PriceTable } from './entries-budget.js';
import type { Entry } from './entries.js';
import { parseLog } from './parse.js';

const table: PriceTable = { asOf: '2026-01-01', models: { 'claude-sonnet-4-5': { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 }, 'gpt-5': { input: 1.25, cachedInput: 0.125, output: 10 }, 'gpt-5-mini': { input: 0.25, output: 2 } } };
const at = '2026-01-01T00:00:00.000Z';
const start = (id: string, model: string, depth = 0): Entry => ({ seq: 1, at, kind: 'session/start', id, cwd: '/w', model, depth, parent: depth ? 'p' : null, format: 2 }) as Entry;
const message = (seq: number, turn: string, step: string, usage?: object): Entry => ({ seq, at, kind: 'assistant/message', turn, step, blocks: [{ type: 'text', text: 'x' }], ...(usage ? { usage } : {}), finish: { kind: 'ok', reason: 'stop' }, surfaceOp: 'append' }) as Entry;

describe('what a run cost', () => {
  it('a model id is priced by the longest table name it starts with', () => {
    expect(priceFor(table, 'claude-sonnet-4-5-20250929')).toBe(table.models['claude-sonnet-4-5']);
    expect(priceFor(table, 'gpt-5-mini-2025-08-07')).toBe(table.models['gpt-5-mini']);
    expect(priceFor(table, 'llama3')).toBeUndefined();
  });

  it('cached and cache-write tokens are priced apart, inside the input they belong to', () => {
    const p = table.models['claude-sonnet-4-5']!;
    // 1,000 input of which 600 read from the cache and 100 written to it; 200 output.
    expect(usdOf({ input: 1000, cached: 600, cacheWrite: 100, output: 200, reasoning: 50 }, p)).toBeCloseTo((300 * 3 + 600 * 0.3 + 100 * 3.75 + 200 * 15) / 1e6, 12);
    // No cache prices in the table: cached tokens cost what input costs.
    expect(usdOf({ input: 1000, cached: 600, cacheWrite: 0, output: 0, reasoning: 0 }, table.models['gpt-5-mini']!)).toBeCloseTo(1000 * 0.25 / 1e6, 12);
  });

  it('per step, per turn, per session and for the subagent tree', () => {
    const child = [start('p.t1.s1.c1', 'gpt-5', 1), message(2, 't1', 't1.s1', { inputTokens: 100, outputTokens: 10 })];
    const parent: Entry[] = [
      start('p', 'claude-sonnet-4-5'),
      message(2, 't1', 't1.s1', { inputTokens: 1000, outputTokens: 100, cachedTokens: 0, cacheWriteTokens: 900 }),
      { seq: 3, at, kind: 'subagent/start', callId: 't1.s1.c1', child: 'p.t1.s1.c1', depth: 1, mode: 'spawn' } as Entry,
      message(4, 't1', 't1.s2', { inputTokens: 1200, outputTokens: 50, cachedTokens: 900 }),
      message(5, 't2', 't2.s1', { inputTokens: 1300, outputTokens: 20, cachedTokens: 1200 }),
    ];
    const r = costOf(parent, table, (id) => (id === 'p.t1.s1.c1' ? child : undefined));
    expect(r.steps.map((s) => s.step)).toEqual(['t1.s1', 't1.s1', 't1.s2', 't2.s1']);
    expect(r.sessions.map((s) => [s.session, s.depth])).toEqual([['p', 0], ['p.t1.s1.c1', 1]]);
    expect(r.turns.filter((t) => t.session === 'p').map((t) => [t.turn, t.tokens.input])).toEqual([['t1', 2200], ['t2', 1300]]);
    const sum = r.steps.reduce((a, s) => a + s.usd!, 0);
    expect(r.total.usd).toBeCloseTo(sum, 12);
    expect(r.total.tokens.output).toBe(180);
    expect(r.sessions[1]!.usd).toBeCloseTo((100 * 1.25 + 10 * 10) / 1e6, 12);
  });

  it('a scripted model costs nothing and says so; a model the table lacks is unpriced, never guessed', () => {
    const r = costOf([start('s', 'scripted: demo'), message(2, 't1', 't1.s1', { inputTokens: 10, outputTokens: 5 })], table);
    expect(r.steps[0]).toMatchObject({ scripted: true, usd: 0 });
    expect(r.total.usd).toBe(0);
    const u = costOf([start('s', 'llama3'), message(2, 't1', 't1.s1', { inputTokens: 10, outputTokens: 5 })], table);
    expect(u.total.usd).toBeUndefined();
    expect(u.total.unpriced).toEqual(['llama3']);
  });

  it('a golden log (a scripted demo) costs $0 with the shipped table', () => {
    const entries = parseLog(readFileSync(new URL('../test/golden/flaky-checkout.jsonl', import.meta.url), 'utf8')).entries;
    const r = costOf(entries, LIST_PRICES);
    expect(r.steps.length).toBe(entries.filter((e) => e.kind === 'assistant/message').length);
    expect(r.steps.every((s) => s.scripted)).toBe(true);
    expect(r.total.usd).toBe(0);
  });
});
