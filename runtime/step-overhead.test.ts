/**
 * What one step costs in actors (ADR 0007): the synchronous phases are
 * actions, the pressure guard is a guard, and a log that is durable on append
 * is not flushed — so a step with one call creates exactly five actors. On a
 * store that must be flushed, each call still flushes at dispatch and result.
 */
import type { InspectionEvent } from 'xstate';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStore } from '../adapters/store/memory.js';
import { noopTool } from '../bench/noop-tool.js';
import type { Plugin } from '../plugins/host.js';
import { createHarness, type Harness } from '../test/helpers/harness.js';

let h: Harness | undefined;
afterEach(() => {
  h?.session.actor.stop();
  h?.cleanup();
  h = undefined;
});

/** The `src` of every actor created during a three-step turn, counted. */
async function actorsOfATurn(store = createMemoryStore(), plugins: Plugin[] = []): Promise<Record<string, number>> {
  const seen: Record<string, number> = {};
  const inspect = (e: InspectionEvent) => {
    if (e.type !== '@xstate.actor') return;
    const src = String((e.actorRef as { src?: unknown }).src ?? '');
    seen[src] = (seen[src] ?? 0) + 1;
  };
  h = createHarness((_r, i) => (i < 2 ? { toolCalls: [{ name: 'noop', arguments: { n: i } }] } : { text: 'done' }), { store, tools: [noopTool], inspect, plugins });
  const out = await h.session.run('go');
  expect(out).toMatchObject({ reason: 'completed', steps: 3 });
  return seen;
}

describe('actors per step', () => {
  it('on a store durable on append: step, streamModel, toolCall, executeTool — nothing else per step (an allowed call is decided as it is created)', async () => {
    const seen = await actorsOfATurn();
    expect(seen).toMatchObject({ step: 3, streamModel: 3, toolCall: 2, executeTool: 2 });
    for (const gone of ['prepareRequest', 'validateCall', 'decideCall', 'measurePressure']) expect(seen[gone]).toBeUndefined();
    // Only the turn's end is flushed (once per turn): the calls skip theirs.
    expect(seen.flushLog).toBe(1);
  });

  it('on a store that must be flushed: each call flushes at dispatch and at its result, and the turn at its end', async () => {
    const seen = await actorsOfATurn({ ...createMemoryStore(), flush: async () => {} });
    expect(seen.flushLog).toBe(2 * 2 + 1);
  });

  it('a guard that answers later: each call waits for it in decideCall, is asked once, and its deny holds (ADR 0036)', async () => {
    const asked: string[] = [];
    const later: Plugin = { name: 'later', apply: (ctx) => void ctx.hooks.guard(async (call) => (asked.push(call.callId), { kind: 'deny', reason: 'not today' })) };
    const seen = await actorsOfATurn(createMemoryStore(), [later]);
    expect(seen.decideCall).toBe(2);
    expect(asked).toEqual(['t1.s1.c1', 't1.s2.c1']);
    expect(h!.entries().filter((e) => e.kind === 'tool/result').map((e) => e.status)).toEqual(['denied', 'denied']);
  });

  it('a verdict that writes at once (a denial) still goes through decideCall, so the log\'s order does not depend on how fast a guard answered (ADR 0036)', async () => {
    const no: Plugin = { name: 'no', apply: (ctx) => void ctx.hooks.guard(() => ({ kind: 'deny', reason: 'no' })) };
    const seen = await actorsOfATurn(createMemoryStore(), [no]);
    expect(seen.decideCall).toBe(2);
    expect(h!.entries().filter((e) => e.kind === 'tool/result').map((e) => e.status)).toEqual(['denied', 'denied']);
  });
});
