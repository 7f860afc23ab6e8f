import { describe, expect, it } from 'vitest';
import { deriveMessages, Projection } from '../derive-messages.js';
import type { ModelMessage } from '../messages.js';
import { isSummaryInstruction } from './summary-prompt.js';
import { planSummary, type SummaryPlanInput } from './summary-plan.js';
import { LogBuilder, pairingProblems } from './testing.js';
import { estimateRequestTokens } from './tokens.js';
import { unitsOf } from './units.js';

const header = { system: 'You are a test.', tools: [{ name: 'read_file', description: 'Reads.', parameters: {} }] };

function session(steps: number, size = 400): LogBuilder {
  const b = new LogBuilder();
  b.user('t1', 'please work through the files');
  for (let i = 1; i <= steps; i++) b.step('t1', i, { calls: [{ name: 'read_file', result: `file ${i}: ${'x'.repeat(size)}` }] });
  return b;
}

const plan = (b: LogBuilder, over: Partial<SummaryPlanInput> = {}) => {
  const p = new Projection();
  b.entries.forEach((e) => p.apply(e));
  return { p, plan: planSummary({ units: unitsOf(p.visible), header, window: 16_000, currentTurn: 't1', tailTokens: 1_000, summaryMaxTokens: 1_000, ...over }) };
};

const summarize = (b: LogBuilder, start: number, end: number, text: string) =>
  b.add({ kind: 'user/message', turn: 't1', text, origin: 'summary', surfaceOp: { op: 'replace', start, end } });

describe('choosing what a summary replaces (stage 2)', () => {
  it('keeps the current input and a recent tail, and replays the whole projection when it fits', () => {
    const b = session(20);
    const { p, plan: s } = plan(b);
    expect(s).toBeDefined();
    const units = unitsOf(p.visible);
    expect(s!.start).toBe(units[1]!.start); // the input (unit 0) is pinned
    expect(s!.prefix).toBe(p.messages.length);
    expect(isSummaryInstruction(s!.instruction)).toBe(true);
    expect(s!.instruction.role === 'user' && s!.instruction.content).toMatch(/## Request and intent[\s\S]*## Key facts[\s\S]*## Files touched[\s\S]*## Errors and fixes[\s\S]*## Current work[\s\S]*## Next step/);
    const tail = units.filter((u) => u.start > s!.end);
    expect(tail.length).toBeGreaterThan(0);
    expect(tail.reduce((n, u) => n + Math.ceil(u.chars / 4), 0)).toBeLessThanOrEqual(1_000 + 200);

    summarize(b, s!.start, s!.end, 'SUMMARY ONE');
    const m = deriveMessages(b.entries);
    expect(m[0]).toEqual({ role: 'user', content: 'please work through the files' });
    expect((m[1] as { content: string }).content).toMatch(/^\[Summary of earlier work.*\]\nSUMMARY ONE$/);
    expect(pairingProblems(m)).toEqual([]);
  });

  it('replays only a prefix, cut short until it fits, when the whole would not', () => {
    const b = session(60);
    const { p, plan: s } = plan(b, { window: 8_000, summaryMaxTokens: 500 });
    expect(s).toBeDefined();
    expect(s!.prefix).toBeLessThan(p.messages.length);
    const req = { system: header.system, tools: header.tools, messages: [...p.messages.slice(0, s!.prefix), s!.instruction] as ModelMessage[] };
    expect(estimateRequestTokens(req)).toBe(s!.tokens);
    expect(s!.tokens).toBeLessThanOrEqual(8_000 - 500);
    // The span ends where the replayed prefix ends: nothing the model did not see is replaced.
    const units = unitsOf(p.visible);
    const last = units.find((u) => u.end === s!.end)!;
    expect(units.indexOf(last)).toBe(units.findIndex((u, i) => units.slice(0, i + 1).reduce((n, x) => n + x.messages.length, 0) === s!.prefix));
  });

  it('takes an earlier summary into the next one (nested spans), and never splits a call from its result', () => {
    const b = session(20);
    const first = plan(b).plan!;
    summarize(b, first.start, first.end, 'SUMMARY ONE');
    for (let i = 21; i <= 40; i++) b.step('t1', i, { calls: [{ name: 'read_file', result: `file ${i}: ${'y'.repeat(400)}` }] });
    const second = plan(b).plan!;
    expect(second.start).toBe(first.start); // the run begins with the first summary
    expect(second.end).toBeGreaterThan(first.end);
    summarize(b, second.start, second.end, 'SUMMARY TWO');
    const m = deriveMessages(b.entries);
    expect(m.filter((x) => x.role === 'user' && x.content.includes('SUMMARY ONE'))).toHaveLength(0);
    expect(m.filter((x) => x.role === 'user' && x.content.includes('SUMMARY TWO'))).toHaveLength(1);
    expect(m[0]).toEqual({ role: 'user', content: 'please work through the files' });
    expect(pairingProblems(m)).toEqual([]);
  });

  it('has nothing to do for a short history or a lone summary', () => {
    const b = new LogBuilder();
    b.user('t1', 'hi');
    expect(plan(b).plan).toBeUndefined();
    const c = session(3, 10);
    // Everything fits in the tail.
    expect(plan(c, { tailTokens: 10_000 }).plan).toBeUndefined();
  });

  it('summarizes earlier turns when no turn is running (manual compaction between turns)', () => {
    const b = session(10);
    b.user('t2', 'next task');
    b.step('t2', 1, { text: 'ok' });
    const s = plan(b, { currentTurn: undefined, tailTokens: 50 }).plan!;
    expect(s.start).toBe(1);
  });
});
