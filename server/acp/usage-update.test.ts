import { describe, expect, it } from 'vitest';
import { costOf } from '../../log/cost.js';
import type { PriceTable } from '../../log/entries-budget.js';
import type { Entry } from '../../log/entries.js';
import { usageUpdate } from './updates.js';

const at = '2026-01-01T00:00:00.000Z';
const table: PriceTable = { asOf: '2026-01-01', models: { 'gpt-5': { input: 1.25, cachedInput: 0.125, output: 10 } } };
const log = (model: string): Entry[] => [
  { seq: 1, at, kind: 'session/start', id: 's', cwd: '/w', model, depth: 0, parent: null, format: 2 } as Entry,
  { seq: 2, at, kind: 'assistant/message', turn: 't1', step: 't1.s1', blocks: [], usage: { inputTokens: 1000, outputTokens: 100 }, finish: { kind: 'ok', reason: 'tool-calls' }, surfaceOp: 'append' } as Entry,
  { seq: 3, at, kind: 'assistant/message', turn: 't1', step: 't1.s2', blocks: [], finish: { kind: 'ok', reason: 'stop' }, surfaceOp: 'append' } as Entry,
];

describe('usage_update: what the session used and what its tree cost so far', () => {
  it('used is the newest answer with usage; cost the report total, in USD', () => {
    const u = usageUpdate(log('gpt-5'), costOf(log('gpt-5'), table), 400_000);
    expect(u).toMatchObject({ sessionUpdate: 'usage_update', used: 1100, size: 400_000, cost: { amount: (1000 * 1.25 + 100 * 10) / 1e6, currency: 'USD' }, _meta: { bridle: { scripted: false, pricesAsOf: '2026-01-01', sessions: 1 } } });
  });

  it('a model the table lacks has no cost (null), never a guess, and is named', () => {
    const u = usageUpdate(log('llama3'), costOf(log('llama3'), table), 8192);
    expect(u).toMatchObject({ cost: null, _meta: { bridle: { unpriced: ['llama3'] } } });
  });

  it('a scripted model costs 0 and says it was scripted', () => {
    const u = usageUpdate(log('scripted:x.json'), costOf(log('scripted:x.json'), table), 8192);
    expect(u).toMatchObject({ cost: { amount: 0, currency: 'USD' }, _meta: { bridle: { scripted: true } } });
  });
});
