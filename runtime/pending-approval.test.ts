/**
 * Pending approvals survive a restart (ADR 0027), in the library: a process that stops while a call waits on an
 * approval leaves the turn open; repair for resume keeps it open; the next process goes on with that turn, asks
 * the same call again through its own answerer (the same seam the first ask went through), and runs it once on an
 * allow. The log verifies, and replays through the machines byte for byte.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMemoryStore } from '../adapters/store/memory.js';
import type { Entry, EntryOf } from '../log/entries.js';
import { planRepair } from '../log/repair.js';
import { resumableTurn } from '../log/resumable.js';
import { verifyLog } from '../log/verify.js';
import { checkCheckpoints, restoreSessionSnapshot } from '../machines/session-fold.js';
import type { AnswerRequest, ApprovalAnswer } from '../ports/approval.js';
import type { ModelProvider } from '../ports/model.js';
import type { ToolDefinition } from '../ports/tools.js';
import { replayThroughMachines } from '../replay/replay.js';
import { createHarness, steppingClock, type Harness } from '../test/helpers/harness.js';
import { createScriptedProviderFromFunction } from '../adapters/model/scripted.js';
import { createSession } from './session.js';

let h: Harness | undefined;
afterEach(() => {
  h?.cleanup();
  h = undefined;
});
const tick = () => new Promise((r) => setTimeout(r, 1));

/** A tool that writes: every run of its body is counted. */
function marking(runs: string[]): ToolDefinition {
  return {
    name: 'mark',
    description: 'appends a mark',
    parameters: z.object({ label: z.string() }),
    readOnly: false,
    idempotent: false,
    execute: async (args) => {
      runs.push((args as { label: string }).label);
      return { status: 'ok', content: `marked ${(args as { label: string }).label}` };
    },
    present: (a) => `mark ${(a as { label: string }).label}`,
  };
}
const reader: ToolDefinition = { name: 'peek', description: 'reads', parameters: z.object({}), readOnly: true, idempotent: true, execute: async () => ({ status: 'ok', content: 'seen' }), present: () => 'peek' };

/** The first process: asks for `mark`, and is stopped (as a kill would) while the question is open. */
async function stoppedWhileAsking(runs: string[], asked: AnswerRequest[]): Promise<Entry[]> {
  h = createHarness((_r, i) => (i === 0 ? { toolCalls: [{ name: 'peek', arguments: {} }, { name: 'mark', arguments: { label: 'once' } }] } : { text: 'done' }), {
    tools: [reader, marking(runs)],
    approval: 'ask',
    answerer: (req) => (asked.push(req), new Promise<ApprovalAnswer>(() => {})),
  });
  h.session.send('mark it');
  while (!h.entries().some((e) => e.kind === 'approval/asked')) await tick();
  const left = h.entries().slice();
  h.session.actor.stop();
  return left;
}

function later(o: { existing: readonly Entry[]; runs: string[]; answer: (req: AnswerRequest) => Promise<ApprovalAnswer>; model?: ModelProvider }) {
  return createSession({
    id: 'test-session',
    cwd: h!.workspace,
    bridleHome: h!.bridleHome,
    settings: { approval: 'ask', sandbox: 'off' },
    services: { model: { ...(o.model ?? createScriptedProviderFromFunction(() => ({ text: 'done' }))), name: 'scripted-test' }, store: createMemoryStore(), clock: steppingClock(Date.UTC(2026, 5, 1)), tools: [reader, marking(o.runs)] },
    sleep: async () => {},
    existing: o.existing,
    snapshot: restoreSessionSnapshot(o.existing),
    answerer: o.answer,
  }).start();
}

describe('an approval pending when the process stopped', () => {
  it('repair for resume leaves the turn open, the call pending; repair for anything else still closes it', async () => {
    const left = await stoppedWhileAsking([], []);
    expect(resumableTurn(left)).toMatchObject({ turn: 't1', step: 't1.s1', steps: 1, settled: ['t1.s1.c1'], pending: ['t1.s1.c2'] });
    const kept = planRepair(left, { keepPending: true });
    expect(kept).toMatchObject({ ok: true, drafts: [], report: { pending: ['t1.s1.c2'] } });
    const closed = planRepair(left);
    expect(closed.ok && closed.drafts.map((d) => d.kind)).toEqual(['repair', 'approval/decided', 'tool/result', 'step/end', 'turn/end']);
  });

  it('is asked again after resume through the session\'s answerer, and on an allow the call runs once; the log verifies and replays', async () => {
    const runs: string[] = [];
    const firstAsks: AnswerRequest[] = [];
    const left = await stoppedWhileAsking(runs, firstAsks);
    expect(runs).toEqual([]);
    const asks: AnswerRequest[] = [];
    const s = later({ existing: left, runs, answer: async (req) => (asks.push(req), { outcome: 'allowed-once', by: 'terminal' }) });
    const out = await s.idle();
    await s.close();
    expect(out).toMatchObject({ turn: 't1', reason: 'completed', steps: 2 });
    // The same question, for the same call, as the first process asked it.
    expect(asks.map((a) => [a.callId, a.presented, a.arguments])).toEqual(firstAsks.map((a) => [a.callId, a.presented, a.arguments]));
    expect(runs).toEqual(['once']);
    const es = s.recorder.entries;
    const added = es.slice(left.length).map((e) => e.kind);
    expect(added).toEqual(['session/reopen', 'approval/asked', 'approval/decided', 'tool/dispatch', 'tool/result', 'step/end', 'step/start', 'assistant/message', 'step/end', 'turn/end', 'checkpoint']);
    // Exactly one turn/start and one turn/end, one result per call (I2, I3).
    expect(es.filter((e) => e.kind === 'turn/start')).toHaveLength(1);
    expect(es.filter((e): e is EntryOf<'tool/result'> => e.kind === 'tool/result').map((r) => [r.callId, r.status])).toEqual([['t1.s1.c1', 'ok'], ['t1.s1.c2', 'ok']]);
    expect(verifyLog([...es], { checkpoints: checkCheckpoints }).violations).toEqual([]);
    const r = await replayThroughMachines(es, [reader, marking([])]);
    expect({ identical: r.identical, note: r.note, line: r.firstDifference }).toEqual({ identical: true, note: undefined, line: undefined });
  });

  it('a process stopped again while asking again leaves it pending again: the third asks once more, and it runs once', async () => {
    const runs: string[] = [];
    const left = await stoppedWhileAsking(runs, []);
    const second = later({ existing: left, runs, answer: () => new Promise<ApprovalAnswer>(() => {}) });
    while (second.recorder.entries.filter((e) => e.kind === 'approval/asked').length < 2) await tick();
    const again = second.recorder.entries.slice();
    second.actor.stop();
    expect(resumableTurn(again)?.pending).toEqual(['t1.s1.c2']);
    const third = later({ existing: again, runs, answer: async () => ({ outcome: 'allowed-once', by: 'terminal' }) });
    await third.idle();
    await third.close();
    expect(runs).toEqual(['once']);
    expect(third.recorder.entries.filter((e) => e.kind === 'approval/asked')).toHaveLength(3);
    expect(verifyLog([...third.recorder.entries], { checkpoints: checkCheckpoints }).violations).toEqual([]);
    expect((await replayThroughMachines(third.recorder.entries, [reader, marking([])])).identical).toBe(true);
  });

  it('resumed under a narrowed policy (never), the pending call is decided again and denied without asking', async () => {
    const runs: string[] = [];
    const left = await stoppedWhileAsking(runs, []);
    const asks: AnswerRequest[] = [];
    const s = createSession({
      id: 'test-session',
      cwd: h!.workspace,
      bridleHome: h!.bridleHome,
      settings: { approval: 'never', sandbox: 'off' },
      services: { model: { ...createScriptedProviderFromFunction(() => ({ text: 'done' })), name: 'scripted-test' }, store: createMemoryStore(), clock: steppingClock(), tools: [reader, marking(runs)] },
      existing: left,
      snapshot: restoreSessionSnapshot(left),
      answerer: async (req) => (asks.push(req), { outcome: 'allowed-once', by: 'terminal' }),
    }).start();
    await s.idle();
    await s.close();
    expect(asks).toEqual([]);
    expect(runs).toEqual([]);
    const added = s.recorder.entries.slice(left.length);
    expect(added.slice(0, 2).map((e) => e.kind)).toEqual(['session/reopen', 'session/policy']);
    expect(added.find((e) => e.kind === 'tool/result')).toMatchObject({ callId: 't1.s1.c2', status: 'denied' });
    expect(verifyLog([...s.recorder.entries]).violations).toEqual([]);
  });

  it("a crash between an approval's answer and its dispatch resumes with the logged answer: asked once, run once", async () => {
    const runs: string[] = [];
    const asks: AnswerRequest[] = [];
    h = createHarness((_r, i) => (i === 0 ? { toolCalls: [{ name: 'mark', arguments: { label: 'once' } }] } : { text: 'done' }), {
      tools: [reader, marking(runs)],
      approval: 'ask',
      answerer: async (req) => (asks.push(req), { outcome: 'allowed-once', by: 'terminal' }),
    });
    h.session.send('mark it');
    while (!h.entries().some((e) => e.kind === 'approval/decided')) await tick();
    h.session.actor.stop();
    // The process died with the answer on disk and its dispatch not: the log ends at the answer.
    const all = h.entries();
    const left = all.slice(0, all.findIndex((e) => e.kind === 'approval/decided') + 1);
    expect(runs.length).toBeLessThanOrEqual(1);
    runs.length = 0;
    expect(resumableTurn(left)).toMatchObject({ pending: [], decided: [{ callId: 't1.s1.c1', answer: { outcome: 'allowed-once', by: 'terminal' } }] });
    const kept = planRepair(left, { keepPending: true });
    expect(kept).toMatchObject({ ok: true, drafts: [], report: { pending: [], decided: [{ callId: 't1.s1.c1', outcome: 'allowed-once' }] } });
    const again: AnswerRequest[] = [];
    const s = later({ existing: left, runs, answer: async (req) => (again.push(req), { outcome: 'rejected', by: 'terminal' }) });
    const out = await s.idle();
    await s.close();
    // Asked once (by the first process), never again; run once, by the second.
    expect(asks.map((a) => a.callId)).toEqual(['t1.s1.c1']);
    expect(again).toEqual([]);
    expect(runs).toEqual(['once']);
    expect(out).toMatchObject({ turn: 't1', reason: 'completed', steps: 2 });
    const es = s.recorder.entries;
    expect(es.slice(left.length).map((e) => e.kind)).toEqual(['session/reopen', 'tool/dispatch', 'tool/result', 'step/end', 'step/start', 'assistant/message', 'step/end', 'turn/end', 'checkpoint']);
    expect(es.filter((e) => e.kind === 'approval/asked')).toHaveLength(1);
    expect(verifyLog([...es], { checkpoints: checkCheckpoints }).violations).toEqual([]);
    const r = await replayThroughMachines(es, [reader, marking([])]);
    expect({ identical: r.identical, note: r.note, line: r.firstDifference }).toEqual({ identical: true, note: undefined, line: undefined });
  });

  it('a step with one call answered and one still asking goes on: the answered one is not asked twice, the other is asked again; each runs once', async () => {
    const runs: string[] = [];
    const asks: AnswerRequest[] = [];
    h = createHarness((_r, i) => (i === 0 ? { toolCalls: [{ name: 'mark', arguments: { label: 'a' } }, { name: 'mark', arguments: { label: 'b' } }] } : { text: 'done' }), {
      tools: [reader, marking(runs)],
      approval: 'ask',
      // The second is allowed at once; it waits for the first, whose question stays open.
      answerer: (req) => (asks.push(req), req.callId.endsWith('c2') ? Promise.resolve({ outcome: 'allowed-once' as const, by: 'terminal' }) : new Promise<ApprovalAnswer>(() => {})),
    });
    h.session.send('mark both');
    while (!h.entries().some((e) => e.kind === 'approval/decided')) await tick();
    const left = h.entries().slice();
    h.session.actor.stop();
    expect(runs).toEqual([]);
    expect(resumableTurn(left)).toMatchObject({ pending: ['t1.s1.c1'], decided: [{ callId: 't1.s1.c2' }] });
    const again: AnswerRequest[] = [];
    const s = later({ existing: left, runs, answer: async (req) => (again.push(req), { outcome: 'allowed-once', by: 'terminal' }) });
    await s.idle();
    await s.close();
    expect(asks.map((a) => a.callId).sort()).toEqual(['t1.s1.c1', 't1.s1.c2']);
    expect(again.map((a) => a.callId)).toEqual(['t1.s1.c1']);
    expect(runs).toEqual(['a', 'b']);
    const es = s.recorder.entries;
    expect(es.filter((e) => e.kind === 'approval/asked' && e.callId === 't1.s1.c2')).toHaveLength(1);
    expect(verifyLog([...es], { checkpoints: checkCheckpoints }).violations).toEqual([]);
    expect((await replayThroughMachines(es, [reader, marking([])])).identical).toBe(true);
  });

  it('a logged rejection not yet settled gives the model the denial: nothing runs, nothing is asked', async () => {
    const runs: string[] = [];
    const left = await stoppedWhileAsking(runs, []);
    const asked = left.findLast((e): e is EntryOf<'approval/asked'> => e.kind === 'approval/asked')!;
    const denied: Entry = { seq: left.at(-1)!.seq + 1, at: asked.at, kind: 'approval/decided', turn: asked.turn, step: asked.step, callId: asked.callId, outcome: 'rejected', by: 'fork' };
    const withAnswer = [...left, denied];
    const seen: string[] = [];
    const model = createScriptedProviderFromFunction((req) => (seen.push(JSON.stringify(req.messages.at(-1))), { text: 'understood' }));
    const again: AnswerRequest[] = [];
    const s = later({ existing: withAnswer, runs, model, answer: async (req) => (again.push(req), { outcome: 'allowed-once', by: 'terminal' }) });
    await s.idle();
    await s.close();
    expect(runs).toEqual([]);
    expect(again).toEqual([]);
    expect(s.recorder.entries.find((e) => e.kind === 'tool/result' && e.callId === 't1.s1.c2')).toMatchObject({ status: 'denied', content: 'Denied: approval rejected. The call did not run.' });
    expect(seen.at(-1)).toContain('Denied: approval rejected');
    expect(verifyLog([...s.recorder.entries], { checkpoints: checkCheckpoints }).violations).toEqual([]);
    expect((await replayThroughMachines(s.recorder.entries, [reader, marking([])])).identical).toBe(true);
  });

  it('a question the turn\'s cancel answered (cancelled) is not gone on with: the turn is closed as before', async () => {
    const left = await stoppedWhileAsking([], []);
    const asked = left.findLast((e): e is EntryOf<'approval/asked'> => e.kind === 'approval/asked')!;
    const cancelled: Entry = { seq: left.at(-1)!.seq + 1, at: asked.at, kind: 'approval/decided', turn: asked.turn, step: asked.step, callId: asked.callId, outcome: 'cancelled', by: 'cancel' };
    const withCancel = [...left, cancelled];
    expect(resumableTurn(withCancel)).toBeUndefined();
    const plan = planRepair(withCancel, { keepPending: true });
    expect(plan.ok && plan.report.notStarted).toEqual(['t1.s1.c2']);
  });

  it('a dispatched call is never re-run: a step with a dispatch logged is closed as before (outcome unknown)', async () => {
    const runs: string[] = [];
    h = createHarness((_r, i) => (i === 0 ? { toolCalls: [{ name: 'mark', arguments: { label: 'once' } }] } : { text: 'done' }), {
      tools: [marking(runs)],
      approval: 'ask',
      answerer: async () => ({ outcome: 'allowed-once', by: 'terminal' }),
    });
    h.session.send('mark it');
    while (!h.entries().some((e) => e.kind === 'tool/dispatch')) await tick();
    h.session.actor.stop();
    const all = h.entries();
    const left = all.slice(0, all.findIndex((e) => e.kind === 'tool/dispatch') + 1);
    expect(resumableTurn(left)).toBeUndefined();
    const plan = planRepair(left, { keepPending: true });
    expect(plan.ok && plan.report.decided).toBeUndefined();
    expect(plan.ok && plan.report.outcomeUnknown.map((c) => c.callId)).toEqual(['t1.s1.c1']);
  });

  it('a rejection after resume denies the call: it never runs', async () => {
    const runs: string[] = [];
    const left = await stoppedWhileAsking(runs, []);
    const s = later({ existing: left, runs, answer: async () => ({ outcome: 'rejected', by: 'terminal' }) });
    await s.idle();
    await s.close();
    expect(runs).toEqual([]);
    expect(s.recorder.entries.find((e) => e.kind === 'tool/result' && e.callId === 't1.s1.c2')).toMatchObject({ status: 'denied' });
    expect(verifyLog([...s.recorder.entries]).violations).toEqual([]);
  });

  it('a later process without an answerer denies it (unavailable): a call whose dispatch was never logged never runs unanswered', async () => {
    const runs: string[] = [];
    const left = await stoppedWhileAsking(runs, []);
    const s = createSession({
      id: 'test-session',
      cwd: h!.workspace,
      bridleHome: h!.bridleHome,
      settings: { approval: 'ask', sandbox: 'off' },
      services: { model: { ...createScriptedProviderFromFunction(() => ({ text: 'done' })), name: 'scripted-test' }, store: createMemoryStore(), clock: steppingClock(), tools: [reader, marking(runs)] },
      existing: left,
      snapshot: restoreSessionSnapshot(left),
    }).start();
    await s.idle();
    await s.close();
    expect(runs).toEqual([]);
    expect(s.recorder.entries.find((e) => e.kind === 'approval/decided')).toMatchObject({ outcome: 'unavailable' });
  });
});
