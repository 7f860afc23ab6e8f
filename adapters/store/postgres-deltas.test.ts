import { describe, expect, it } from 'vitest';
import type { Delta } from '../../ports/relay.js';
import { packDeltas, unpackDeltas } from './postgres-deltas.js';

const text = (t: string, step = 't1.s1'): Delta => ({ step, chunk: { type: 'text-delta', index: 0, text: t } });
const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

describe('live chunks between workers', () => {
  it('packs deltas in order into payloads under the limit, and a relay of the session reads them back as they were', () => {
    const deltas = [{ step: 't1.s1', chunk: { type: 'block-start', index: 0, block: { type: 'text' } } } as Delta, ...Array.from({ length: 300 }, (_, i) => text(`word${i} "quoted" é `)), { step: 't1.s1', chunk: { type: 'block-end', index: 0 } } as Delta];
    const { payloads, dropped } = packDeltas('s-1', deltas, 1000);
    expect(dropped).toBe(0);
    expect(payloads.length).toBeGreaterThan(5);
    for (const p of payloads) expect(bytes(p)).toBeLessThanOrEqual(1000);
    expect(payloads.flatMap((p) => unpackDeltas('s-1', p))).toEqual(deltas);
  });

  it('splits a text delta too big for one payload into deltas of the same block, by code point, and leaves out another chunk that cannot fit', () => {
    const big = text('ab€😀"\n'.repeat(400));
    const args: Delta = { step: 't1.s1', chunk: { type: 'tool-call-delta', index: 1, argumentsDelta: 'x'.repeat(5000) } };
    const { payloads, dropped } = packDeltas('s-1', [big, args, text('tail')], 700);
    expect(dropped).toBe(1);
    for (const p of payloads) expect(bytes(p)).toBeLessThanOrEqual(700);
    const back = payloads.flatMap((p) => unpackDeltas('s-1', p));
    expect(back.every((d) => d.chunk.type === 'text-delta' && d.chunk.index === 0)).toBe(true);
    expect(back.map((d) => (d.chunk as { text: string }).text).join('')).toBe(`${'ab€😀"\n'.repeat(400)}tail`);
  });

  it('a relay reads nothing from another session\'s payload, or from one that does not parse', () => {
    const [p] = packDeltas('s-1', [text('hi')]).payloads;
    expect(unpackDeltas('s-12', p!)).toEqual([]);
    expect(unpackDeltas('s', p!)).toEqual([]);
    expect(unpackDeltas('s-1', 's-1\n[{"step":')).toEqual([]);
    expect(unpackDeltas('s-1', 's-1\n{"step":"x"}')).toEqual([]);
    expect(unpackDeltas('s-1', 's-1\n[{"step":"t1.s1"},{"step":"t1.s1","chunk":{"type":"block-end","index":0}}]')).toEqual([{ step: 't1.s1', chunk: { type: 'block-end', index: 0 } }]);
  });
});
