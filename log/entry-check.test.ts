import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Entry } from './entries.js';
import { compileCheck } from './entry-check.js';

const golden = new URL('../test/golden/', import.meta.url).pathname;
const at = '2026-01-01T00:00:00.000Z';
/** Kinds and shapes the golden logs do not hold. */
const extra: unknown[] = [
  { seq: 2, at, kind: 'model/retry', turn: 't1', step: 't1.s1', attempt: 1, code: 'RATE_LIMIT', message: 'slow down', delayMs: 10 },
  { seq: 3, at, kind: 'hook/report', hook: 'pre-step', listener: 'x', problem: 'threw', turn: 't1' },
  { seq: 4, at, kind: 'subagent/start', callId: 't1.s1.c1', child: 's.t1.s1.c1', depth: 1, mode: 'spawn' },
  { seq: 5, at, kind: 'subagent/end', callId: 't1.s1.c1', child: 's.t1.s1.c1', reason: 'interrupted' },
  { seq: 6, at, kind: 'user/message', turn: 't2', text: 'summary', origin: 'summary', verdict: 'uncertain', surfaceOp: { op: 'replace', start: 2, end: 5 } },
  { seq: 7, at, kind: 'assistant/message', turn: 't2', step: 't2.s1', blocks: [{ type: 'reasoning', text: 'hm' }, { type: 'text', text: 'cut' }], usage: { inputTokens: 3, outputTokens: 4 }, finish: { kind: 'error', code: 'TRANSPORT', message: 'gone' }, interrupted: true, surfaceOp: 'append' },
  { seq: 8, at, kind: 'session/start', id: 's', cwd: '/w', model: 'm', depth: 0, parent: null, format: 1, config: { maxSteps: 3, contextWindow: 4096, compaction: { tailRatio: 0.5 } } },
  { seq: 9, at, kind: 'future/thing', ignorable: true },
  { seq: 10, at, kind: 'assistant/message', turn: 't3', step: 't3.s1', blocks: [{ type: 'reasoning', text: 'plan', provider: 'openai-responses', data: { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'plan' }], encrypted_content: 'gAAA' } }, { type: 'text', text: 'ok' }], usage: { inputTokens: 3, outputTokens: 4, reasoningTokens: 2, cachedTokens: 1, cacheWriteTokens: 0 }, finish: { kind: 'ok', reason: 'stop' }, surfaceOp: 'append' },
];
const samples = (): unknown[] => [
  ...readdirSync(golden)
    .filter((f) => f.endsWith('.jsonl'))
    .flatMap((f) => readFileSync(join(golden, f), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as unknown)),
  ...extra,
];

const LEAVES: unknown[] = [null, -1, 0, 1.5, 2 ** 53, 1e300, -0, '', 'x', 't1', 't1.s1', 'append', at, true, false, [], {}, [1], { type: 'text' }];

/** Every variant of `v` one edit away, down to nested objects and arrays: a value swapped, a key dropped or added, the keys reordered. */
function variants(v: unknown, depth = 0): unknown[] {
  if (depth > 4 || v === null || typeof v !== 'object') return LEAVES;
  const out: unknown[] = [];
  if (Array.isArray(v)) {
    v.forEach((x, i) => {
      for (const y of variants(x, depth + 1)) out.push(v.map((z, j) => (j === i ? y : z)));
    });
    out.push([], [...v, v[0]], [...v].reverse());
    return out;
  }
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  for (const k of keys) {
    for (const y of variants(o[k], depth + 1)) out.push({ ...o, [k]: y });
    const { [k]: _dropped, ...rest } = o;
    out.push(rest);
  }
  out.push({ ...o, extra: 1 }, { extra: 1, ...o }, Object.fromEntries(Object.entries(o).reverse()));
  if (keys.length) out.push(JSON.parse(`{"__proto__":{"x":1},${JSON.stringify(o).slice(1)}`));
  return out;
}

const checks = new Map(Entry.options.map((o) => [o.shape.kind.value, compileCheck(o)]));

describe('compileCheck (the fast yes for log lines)', () => {
  it('says yes only where zod accepts and returns the same value, keys in the same order; and says yes wherever that holds', () => {
    let tried = 0;
    let fastYes = 0;
    for (const sample of samples()) {
      for (const v of [sample, ...variants(sample)]) {
        const kind = (v as { kind?: unknown } | null)?.kind;
        const check = typeof kind === 'string' ? checks.get(kind as never) : undefined;
        if (!check) continue;
        tried++;
        const r = Entry.safeParse(v);
        const same = r.success && JSON.stringify(r.data) === JSON.stringify(v);
        const fast = check(v);
        if (fast) fastYes++;
        if (fast !== same) throw new Error(`fast ${fast}, zod ${r.success ? 'accepts' : 'refuses'}${r.success && !same ? ' with another key order' : ''}: ${JSON.stringify(v).slice(0, 300)}`);
      }
    }
    expect(tried).toBeGreaterThan(20_000);
    expect(fastYes).toBeGreaterThan(1000);
  });

  it('takes every kind whose schema it can judge, and gives up on a record (session/start\'s budget prices, request/header, question/decided\'s values), never guessing', () => {
    expect([...checks].filter(([, c]) => !c).map(([k]) => k)).toEqual(['session/start', 'request/header', 'question/decided']);
  });

  it('gives up on what it does not know: a transform, a default, a non-strict object, a format with code of its own', () => {
    for (const s of [z.string().transform((x) => x.length), z.strictObject({ a: z.number().default(1) }), z.object({ a: z.string() }), z.url(), z.record(z.string(), z.string()), z.string().refine((x) => x !== 'x')]) {
      expect(compileCheck(s as z.core.$ZodType)).toBeUndefined();
    }
  });

  it('a polluted Object.prototype only makes it say no (zod decides)', () => {
    const check = checks.get('turn/start')!;
    const v = { seq: 2, at, kind: 'turn/start', turn: 't1', input: 'x' };
    expect(check(v)).toBe(true);
    Object.defineProperty(Object.prototype, 'polluted', { value: 1, enumerable: true, configurable: true, writable: true });
    let polluted: boolean;
    try {
      polluted = check(v);
    } finally {
      delete (Object.prototype as Record<string, unknown>).polluted;
    }
    expect(polluted).toBe(false);
  });
});
