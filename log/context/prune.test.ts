import { describe, expect, it } from 'vitest';
import { deriveMessages, Projection } from '../derive-messages.js';
import { planPrune } from './prune.js';
import { LogBuilder } from './testing.js';
import { unitsOf } from './units.js';

describe('pruning oversized tool results (stage 1)', () => {
  it('replaces them by head and tail with a note, same call ids, citing the original seq; small ones and the log stay', () => {
    const b = new LogBuilder();
    b.user('t1', 'go');
    const big = `${'first line\n'.repeat(300)}😀${'last line\n'.repeat(300)}`;
    b.step('t1', 1, { calls: [{ name: 'read_file', result: big }, { name: 'list_dir', result: 'small' }] });
    b.step('t1', 2, { text: 'ok' });
    const p = new Projection();
    b.entries.forEach((e) => p.apply(e));
    const drafts = planPrune(unitsOf(p.visible), { capTokens: 100, newestCapTokens: 1000 });
    expect(drafts).toHaveLength(1);
    const d = drafts[0]!;
    const original = b.entries.find((e) => e.kind === 'tool/result' && e.name === 'read_file')!;
    expect(d).toMatchObject({ kind: 'tool/result', callId: 't1.s1.c1', toolCallId: 't1.s1-0', name: 'read_file', status: 'ok', surfaceOp: { op: 'replace', start: original.seq, end: original.seq } });
    expect(d.content.startsWith('first line\n')).toBe(true);
    expect(d.content.endsWith('last line\n')).toBe(true);
    expect(d.content).toMatch(/bridle cut \d+ characters \(\d+ lines\)/);
    expect(d.content.length).toBeLessThan(big.length / 5);

    const before = b.entries.length;
    b.add(d);
    const m = deriveMessages(b.entries);
    expect(b.entries).toHaveLength(before + 1);
    // Still paired, still in call order, now small.
    const tools = m.filter((x) => x.role === 'tool') as { toolCallId: string; content: string }[];
    expect(tools.map((t) => t.toolCallId)).toEqual(['t1.s1-0', 't1.s1-1']);
    expect(tools[0]!.content).toBe(d.content);
    // Nothing left to prune.
    const p2 = new Projection();
    b.entries.forEach((e) => p2.apply(e));
    expect(planPrune(unitsOf(p2.visible), { capTokens: 100, newestCapTokens: 1000 })).toEqual([]);
  });

  it('gives the newest unit its larger cap', () => {
    const b = new LogBuilder();
    b.user('t1', 'go');
    b.step('t1', 1, { calls: [{ name: 'read_file', result: 'y'.repeat(2000) }] });
    const p = new Projection();
    b.entries.forEach((e) => p.apply(e));
    expect(planPrune(unitsOf(p.visible), { capTokens: 100, newestCapTokens: 1000 })).toEqual([]);
    expect(planPrune(unitsOf(p.visible), { capTokens: 100, newestCapTokens: 200 })).toHaveLength(1);
  });
});
