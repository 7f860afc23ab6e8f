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
  });
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
    });
    await s.idle();
    await s.close();
    expect(asks).toEqual([]);
    expect(runs).toEqual([]);
    const added = s.recorder.entries.slice(left.length);
    expect(added.slice(0, 2).map((e) => e.kind)).toEqual(['session/reopen', 'session/policy']);
    expect(added.find((e) => e.kind === 'tool/result')).toMatchObject({ callId: 't1.s1.c2', status: 'denied' });
    expect(verifyLog([...s.recorder.entries]).violations).toEqual([]);
  });

  it('a step with a call answered but not yet dispatched is not gone on with (it would be asked twice): repair closes it as before', async () => {
    const runs: string[] = [];
    h = createHarness((_r, i) => (i === 0 ? { toolCalls: [{ name: 'mark', arguments: { label: 'a' } }, { name: 'mark', arguments: { label: 'b' } }] } : { text: 'done' }), {
      tools: [marking(runs)],
      approval: 'ask',
      // The second is allowed at once; it waits for the first, whose question stays open.
      answerer: (req) => (req.callId.endsWith('c2') ? Promise.resolve({ outcome: 'allowed-once' as const, by: 'terminal' }) : new Promise<ApprovalAnswer>(() => {})),
    });
    h.session.send('mark both');
    while (!h.entries().some((e) => e.kind === 'approval/decided')) await tick();
    const left = h.entries().slice();
    h.session.actor.stop();
    expect(runs).toEqual([]);
    expect(resumableTurn(left)).toBeUndefined();
    const plan = planRepair(left, { keepPending: true });
    expect(plan.ok && plan.report.pending).toBeUndefined();
    expect(plan.ok && plan.report.notStarted).toEqual(['t1.s1.c1', 't1.s1.c2']);
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
    });
    await s.idle();
    await s.close();
    expect(runs).toEqual([]);
    expect(s.recorder.entries.find((e) => e.kind === 'approval/decided')).toMatchObject({ outcome: 'unavailable' });
  });
});
