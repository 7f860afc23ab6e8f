/**
 * The session's budget (ADR 0047; issue 21 item 4, issue 22 item 9), in the library: checked before each model
 * call from logged figures only; spent, the call is not made — the turn ends BUDGET_EXHAUSTED with the figures,
 * or, where the host asks, waits on a question of its own class whose yes makes the call exactly once. The logs
 * verify and replay through the machines byte for byte.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { EntryOf } from '../log/entries.js';
import { verifyLog } from '../log/verify.js';
import { checkCheckpoints } from '../machines/session-fold.js';
import type { AnswerRequest } from '../ports/approval.js';
import type { ToolDefinition } from '../ports/tools.js';
import { replayThroughMachines } from '../replay/replay.js';
import { createHarness, type Harness } from '../test/helpers/harness.js';
import { createMemorySessionStore, createMemoryStore } from '../adapters/store/memory.js';
import { createScriptedProviderFromFunction } from '../adapters/model/scripted.js';
import { planRepair } from '../log/repair.js';
import { resumableTurn } from '../log/resumable.js';
import { restoreSessionSnapshot } from '../machines/session-fold.js';
import type { ApprovalAnswer } from '../ports/approval.js';
import { createSession } from './session.js';
import { steppingClock } from '../test/helpers/harness.js';
import type { ModelRequest } from '../log/messages.js';
import { toolsOfLog } from '../replay/setup.js';
import { builtinTools } from '../tools/index.js';

let h: Harness | undefined;
afterEach(() => {
  h?.cleanup();
  h = undefined;
});

const peek: ToolDefinition = { name: 'peek', description: 'reads', parameters: z.object({}), readOnly: true, idempotent: true, execute: async () => ({ status: 'ok', content: 'seen' }), present: () => 'peek' };
/** Every answer asks for one more peek and spends 600 tokens; the third says done. */
const spender = (_r: unknown, i: number) => (i < 2 ? { toolCalls: [{ name: 'peek', arguments: {} }], usage: { inputTokens: 500, outputTokens: 100 } } : { text: 'done', usage: { inputTokens: 500, outputTokens: 100 } });

async function replays(entries: readonly import('../log/entries.js').Entry[]) {
  const r = await replayThroughMachines(entries, [peek]);
  return { identical: r.identical, note: r.note, line: r.firstDifference };
}

describe('a budget', () => {
  it('a budget ends a run: the call past it is not made, the turn ends BUDGET_EXHAUSTED with the figures', async () => {
    h = createHarness(spender, { tools: [peek], settings: { budget: { tokens: 1000 } } });
    const out = await h.session.run('look');
    await h.session.close();
    expect(out).toMatchObject({ reason: 'error', code: 'BUDGET_EXHAUSTED', cause: 'tokens 1200/1000 used', steps: 2 });
    // Two calls made (600, then 1200 ≥ 1000): the third is never asked of the model.
    expect(h.requests).toHaveLength(2);
    const es = h.entries();
    expect(es[0]).toMatchObject({ kind: 'session/start', config: { budget: { tokens: 1000 } } });
    expect(es.filter((e) => e.kind.startsWith('budget/'))).toMatchObject([
      { kind: 'budget/asked', turn: 't1', used: { tokens: 1200, usd: 0 }, limit: { tokens: 1000 } },
      { kind: 'budget/decided', turn: 't1', outcome: 'unavailable' },
    ]);
    expect(verifyLog([...es], { checkpoints: checkCheckpoints }).violations).toEqual([]);
    expect(await replays(es)).toEqual({ identical: true, note: undefined, line: undefined });
  });

  it('under never it is decided without asking: the turn ends, nobody is asked', async () => {
    const asked: AnswerRequest[] = [];
    h = createHarness(spender, { tools: [peek], approval: 'never', askOnBudget: true, answerer: async (r) => (asked.push(r), { outcome: 'allowed-once', by: 'x' }), settings: { budget: { tokens: 1000 } } });
    const out = await h.session.run('look');
    await h.session.close();
    expect(out).toMatchObject({ code: 'BUDGET_EXHAUSTED' });
    expect(asked).toEqual([]);
    expect(h.entries().find((e) => e.kind === 'budget/decided')).toMatchObject({ outcome: 'rejected', by: 'approval policy never' });
  });

  it('a budget that pauses where the host asks: a yes raises it by one budget and the call is made once; the log replays', async () => {
    const asked: AnswerRequest[] = [];
    h = createHarness(spender, { tools: [peek], approval: 'ask', askOnBudget: true, answerer: async (r) => (asked.push(r), { outcome: 'allowed-once', by: 'client' }), settings: { budget: { tokens: 1000 } } });
    const out = await h.session.run('look');
    await h.session.close();
    expect(out).toMatchObject({ reason: 'completed', steps: 3 });
    expect(h.requests).toHaveLength(3);
    expect(asked.map((a) => [a.callId, a.name])).toEqual([['t1.budget1', 'budget']]);
    const es = h.entries();
    const decided = es.find((e): e is EntryOf<'budget/decided'> => e.kind === 'budget/decided');
    expect(decided).toMatchObject({ outcome: 'allowed-once', by: 'client', limit: { tokens: 2200 } });
    // The question stands between the steps: the third step/start follows the decision.
    const at = es.indexOf(decided!);
    expect(es.slice(at + 1).find((e) => e.kind === 'step/start')).toMatchObject({ step: 't1.s3' });
    expect(verifyLog([...es], { checkpoints: checkCheckpoints }).violations).toEqual([]);
    expect(await replays(es)).toEqual({ identical: true, note: undefined, line: undefined });
  });

  it('a no from the host ends the turn BUDGET_EXHAUSTED and the call is not made; the log replays', async () => {
    h = createHarness(spender, { tools: [peek], approval: 'ask', askOnBudget: true, answerer: async () => ({ outcome: 'rejected', by: 'client' }), settings: { budget: { tokens: 1000 } } });
    const out = await h.session.run('look');
    await h.session.close();
    expect(out).toMatchObject({ code: 'BUDGET_EXHAUSTED', steps: 2 });
    expect(h.requests).toHaveLength(2);
    expect(await replays(h.entries())).toEqual({ identical: true, note: undefined, line: undefined });
  });

  it('a scripted model costs nothing: a dollar budget never stops it, its tokens still count', async () => {
    h = createHarness(spender, { tools: [peek], settings: { budget: { usd: 0.000001 } } });
    const out = await h.session.run('look');
    await h.session.close();
    expect(out).toMatchObject({ reason: 'completed', steps: 3 });
    // The dollar cap is counted at the prices session/start copied.
    expect(h.entries()[0]).toMatchObject({ config: { budget: { usd: 0.000001, prices: { asOf: expect.any(String) } } } });
  });

  it('the root budget counts its children\'s usage: a child that spends it leaves the parent no next call, and a child gets only what is left', async () => {
    const sessions = createMemorySessionStore();
    const firstUser = (req: ModelRequest) => {
      const m = req.messages.find((x) => x.role === 'user');
      return m && m.role === 'user' ? m.content : '';
    };
    const childCalls: number[] = [];
    h = createHarness(
      (req) => {
        if (firstUser(req) === 'dig') {
          childCalls.push(1);
          return { toolCalls: [{ name: 'list_dir', arguments: {} }], usage: { inputTokens: 400, outputTokens: 100 } };
        }
        return { toolCalls: [{ name: 'delegate', arguments: { task: 'dig' } }], usage: { inputTokens: 100, outputTokens: 0 } };
      },
      { settings: { maxDepth: 1, budget: { tokens: 1000 } }, services: { store: sessions } },
    );
    const out = await h.session.run('delegate it');
    await h.session.close();
    // Parent 100, then the child may spend 900: two calls (500, 1000) and it is stopped before a third.
    expect(childCalls).toHaveLength(2);
    expect(out).toMatchObject({ reason: 'error', code: 'BUDGET_EXHAUSTED', cause: 'tokens 1100/1000 used', steps: 1 });
    const es = h.entries();
    const end = es.find((e): e is EntryOf<'subagent/end'> => e.kind === 'subagent/end');
    expect(end).toMatchObject({ code: 'BUDGET_EXHAUSTED', usage: { tokens: 1000, usd: 0 } });
    const childLog = (sessions.get(end!.child)?.text() ?? '').trim().split('\n').map((l) => JSON.parse(l) as import('../log/entries.js').Entry);
    expect(childLog[0]).toMatchObject({ kind: 'session/start', config: { budget: { tokens: 900 } } });
    expect(childLog.find((e) => e.kind === 'budget/decided')).toMatchObject({ outcome: 'rejected', by: 'approval policy never' });
    expect(verifyLog([...es], { checkpoints: checkCheckpoints }).violations).toEqual([]);
    const r = await replayThroughMachines(es, toolsOfLog(es, builtinTools()));
    expect({ identical: r.identical, note: r.note, line: r.firstDifference }).toEqual({ identical: true, note: undefined, line: undefined });
  });

  it('a pending budget approval survives a crash: resume asks it again, and on a yes the call is made once; the log verifies and replays', async () => {
    const first: AnswerRequest[] = [];
    h = createHarness(spender, { tools: [peek], approval: 'ask', askOnBudget: true, answerer: (r) => (first.push(r), new Promise<ApprovalAnswer>(() => {})), settings: { budget: { tokens: 1000 } } });
    h.session.send('look');
    while (!h.entries().some((e) => e.kind === 'budget/asked')) await new Promise((r) => setTimeout(r, 1));
    while (first.length === 0) await new Promise((r) => setTimeout(r, 1));
    const left = h.entries().slice();
    h.session.actor.stop();
    expect(h.requests).toHaveLength(2);
    // Resume's repair keeps the turn open on its question; any other repair closes it.
    expect(resumableTurn(left)).toMatchObject({ turn: 't1', steps: 2, budget: true });
    expect(planRepair(left, { keepPending: true })).toMatchObject({ ok: true, drafts: [] });
    let calls = 0;
    const asked: AnswerRequest[] = [];
    const s = createSession({
      id: 'test-session',
      cwd: h.workspace,
      bridleHome: h.bridleHome,
      settings: { approval: 'ask', sandbox: 'off', budget: { tokens: 1000 } },
      services: { model: { ...createScriptedProviderFromFunction(() => (calls++, { text: 'done', usage: { inputTokens: 500, outputTokens: 100 } })), name: 'scripted-test' }, store: createMemoryStore(), clock: steppingClock(Date.UTC(2026, 5, 1)), tools: [peek] },
      sleep: async () => {},
      existing: left,
      snapshot: restoreSessionSnapshot(left),
      askOnBudget: true,
      answerer: async (r) => (asked.push(r), { outcome: 'allowed-once', by: 'terminal' }),
    });
    const out = await s.start().idle();
    await s.close();
    expect(out).toMatchObject({ turn: 't1', reason: 'completed', steps: 3 });
    expect(asked.map((a) => [a.callId, a.arguments])).toEqual(first.map((a) => [a.callId.replace(/1$/, '2'), a.arguments]));
    expect(calls).toBe(1);
    const es = s.recorder.entries;
    expect(es.slice(left.length).map((e) => e.kind)).toEqual(['session/reopen', 'budget/asked', 'budget/decided', 'step/start', 'assistant/message', 'step/end', 'turn/end', 'checkpoint']);
    expect(es.filter((e) => e.kind === 'turn/start')).toHaveLength(1);
    expect(verifyLog([...es], { checkpoints: checkCheckpoints }).violations).toEqual([]);
    expect(await replays(es)).toEqual({ identical: true, note: undefined, line: undefined });
  });
});
