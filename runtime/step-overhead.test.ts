/**
 * What one step costs in actors (ADR 0007): the synchronous phases are
 * actions, the pressure guard is a guard, and a log that is durable on append
 * is not flushed — so a step with one call creates exactly five actors. On a
 * store that must be flushed, each call that may not run twice still flushes
 * at dispatch and result; a read-only, idempotent one does not (ADR 0072).
 */
import type { InspectionEvent } from 'xstate';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStore } from '../adapters/store/memory.js';
import { noopOnceTool, noopTool } from '../bench/noop-tool.js';
import type { ToolDefinition } from '../ports/tools.js';
import { createHarness, type Harness } from '../test/helpers/harness.js';

let h: Harness | undefined;
afterEach(() => {
  h?.session.actor.stop();
  h?.cleanup();
  h = undefined;
});

/** The `src` of every actor created during a three-step turn, counted. */
async function actorsOfATurn(store = createMemoryStore(), tool: ToolDefinition<{ n?: number }> = noopTool): Promise<Record<string, number>> {
  const seen: Record<string, number> = {};
  const inspect = (e: InspectionEvent) => {
    if (e.type !== '@xstate.actor') return;
    const src = String((e.actorRef as { src?: unknown }).src ?? '');
    seen[src] = (seen[src] ?? 0) + 1;
  };
  h = createHarness((_r, i) => (i < 2 ? { toolCalls: [{ name: tool.name, arguments: { n: i } }] } : { text: 'done' }), { store, tools: [tool], inspect });
  const out = await h.session.run('go');
  expect(out).toMatchObject({ reason: 'completed', steps: 3 });
  return seen;
}

describe('actors per step', () => {
  it('on a store durable on append: step, streamModel, toolCall, decideCall, executeTool — nothing else per step', async () => {
    const seen = await actorsOfATurn();
    expect(seen).toMatchObject({ step: 3, streamModel: 3, toolCall: 2, decideCall: 2, executeTool: 2 });
    for (const gone of ['prepareRequest', 'validateCall', 'measurePressure']) expect(seen[gone]).toBeUndefined();
    // Only the turn's end is flushed (once per turn): the calls skip theirs.
    expect(seen.flushLog).toBe(1);
  });

  it('on a store that must be flushed: each call that may not run twice flushes at dispatch and at its result, and the turn at its end', async () => {
    const seen = await actorsOfATurn({ ...createMemoryStore(), flush: async () => {} }, noopOnceTool);
    expect(seen.flushLog).toBe(2 * 2 + 1);
  });

  it('on a store that must be flushed: read-only, idempotent calls flush nothing of their own; the turn flushes at its end (ADR 0072)', async () => {
    const seen = await actorsOfATurn({ ...createMemoryStore(), flush: async () => {} });
    expect(seen.flushLog).toBe(1);
  });
});
