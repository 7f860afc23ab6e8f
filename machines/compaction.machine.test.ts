import { createActor, fromPromise } from 'xstate';
import { describe, expect, it } from 'vitest';
import type { Draft, DraftOf } from '../log/entries.js';
import { compactionMachine, type CompactionOutput, outcomeOf, type SummaryAnswer } from './compaction.machine.js';
import type { ContextMeasure, SummaryRequestPlan } from './compaction-drafts.js';

const m = (tokens: number): ContextMeasure => ({ tokens, source: 'estimate', window: 1000, limit: 800 });
const plan: SummaryRequestPlan = { start: 2, end: 9, turn: 't1', request: { model: 'm', system: '', tools: [], messages: [] }, replacing: 500 };

function run(o: { trigger: 'proactive' | 'reactive' | 'manual'; measures: number[]; prunes?: number; plan?: SummaryRequestPlan | null; answer?: SummaryAnswer }) {
  const drafts: Draft[] = [];
  const measures = [...o.measures];
  const prunes = Array.from({ length: o.prunes ?? 0 }, (_, i): DraftOf<'tool/result'> => ({ kind: 'tool/result', turn: 't1', step: 't1.s1', callId: 't1.s1.c1', toolCallId: 'a', name: 'x', status: 'ok', content: `p${i}`, surfaceOp: { op: 'replace', start: 5, end: 5 } }));
  // The synchronous phases are actions that answer at once, as the host's do (actors/compaction.ts).
  const machine = compactionMachine.provide({
    actions: {
      record: (_: unknown, d: Draft) => void drafts.push(d),
      measure: ({ self }) => self.send({ type: 'compaction.measured', measure: m(measures.shift() ?? 0) }),
      planPrune: ({ self }) => self.send({ type: 'compaction.pruned', drafts: prunes }),
      planSummary: ({ self }) => self.send({ type: 'compaction.planned', plan: o.plan === undefined ? plan : o.plan }),
    },
    actors: {
      requestSummary: fromPromise(async () => o.answer ?? { ok: true as const, text: 'short summary' }),
      flushLog: fromPromise<void, void>(async () => {}),
    },
  });
  const actor = createActor(machine, { input: { trigger: o.trigger, turn: 't1' } });
  return new Promise<{ out: CompactionOutput; kinds: string[]; drafts: Draft[] }>((resolve) => {
    actor.subscribe({ complete: () => resolve({ out: actor.getSnapshot().output!, kinds: drafts.map((d) => d.kind), drafts }) });
    actor.start();
  });
}

describe('the compaction machine', () => {
  it('proactive: pruning that brings the request under the limit ends there, without a model request', async () => {
    const r = await run({ trigger: 'proactive', measures: [900, 500], prunes: 1 });
    expect(r.kinds).toEqual(['compaction/start', 'tool/result', 'compaction/end']);
    expect(r.out).toEqual({ outcome: 'pruned', tokensBefore: 900, tokensAfter: 500, shrank: true });
  });

  it('still over after pruning: summarizes; the summary is logged twice over (bracket + replacement) inside the brackets', async () => {
    const r = await run({ trigger: 'proactive', measures: [900, 880, 300] });
    expect(r.kinds).toEqual(['compaction/start', 'compaction/summary', 'user/message', 'compaction/end']);
    expect(r.drafts[2]).toMatchObject({ origin: 'summary', surfaceOp: { op: 'replace', start: 2, end: 9 } });
    expect(r.out).toMatchObject({ outcome: 'compacted', shrank: true });
  });

  it('manual and reactive compaction summarize even when under the limit', async () => {
    expect((await run({ trigger: 'manual', measures: [100, 100, 60] })).out.outcome).toBe('compacted');
    expect((await run({ trigger: 'reactive', measures: [100, 100, 60] })).out.outcome).toBe('compacted');
  });

  it('a failed, empty or not-shorter summary logs no replacement; nothing to plan is nothing-to-do', async () => {
    expect((await run({ trigger: 'manual', measures: [100, 100], answer: { ok: false, code: 'SERVER', message: 'x' } })).out.outcome).toBe('failed');
    expect((await run({ trigger: 'manual', measures: [100, 100], answer: { ok: true, text: ' ' } })).kinds).toEqual(['compaction/start', 'compaction/end']);
    expect((await run({ trigger: 'manual', measures: [100, 100], answer: { ok: true, text: 'x'.repeat(4000) } })).out.outcome).toBe('failed');
    const none = await run({ trigger: 'manual', measures: [100, 100], plan: null });
    expect(none.out).toEqual({ outcome: 'nothing-to-do', tokensBefore: 100, tokensAfter: 100, shrank: false });
  });

  it('measuring and planning answer in the same tick: the bracket opens as the compaction starts, and nothing can land between its phases', () => {
    const drafts: Draft[] = [];
    const machine = compactionMachine.provide({
      actions: {
        record: (_: unknown, d: Draft) => void drafts.push(d),
        measure: ({ self }) => self.send({ type: 'compaction.measured', measure: m(900) }),
        planPrune: ({ self }) => self.send({ type: 'compaction.pruned', drafts: [] }),
        planSummary: ({ self }) => self.send({ type: 'compaction.planned', plan }),
      },
      actors: { requestSummary: fromPromise(() => new Promise<SummaryAnswer>(() => {})), flushLog: fromPromise<void, void>(async () => {}) },
    });
    const actor = createActor(machine, { input: { trigger: 'manual' } }).start();
    // Synchronously after start: measured, pruned, remeasured and planned; only the model request waits.
    expect(actor.getSnapshot().value).toBe('summarizing');
    expect(drafts.map((d) => d.kind)).toEqual(['compaction/start']);
    actor.stop();
  });

  it('outcomes', () => {
    const base = { opened: true, cancelled: false, summarized: false, failed: false, pruned: 0 };
    expect(outcomeOf({ ...base, cancelled: true, summarized: true })).toBe('interrupted');
    expect(outcomeOf({ ...base, summarized: true, pruned: 2 })).toBe('compacted');
    expect(outcomeOf({ ...base, failed: true, pruned: 2 })).toBe('pruned');
    expect(outcomeOf({ ...base, failed: true })).toBe('failed');
    expect(outcomeOf({ ...base, opened: false })).toBe('failed');
    expect(outcomeOf(base)).toBe('nothing-to-do');
  });
});
