/**
 * The floor is bridle's own actor tree (#26): the same actors, spawned and invoked as bridle's session spawns and
 * invokes them for the same turn, only their effects gone; and the allocation count counts what was allocated.
 */
import type { InspectionEvent } from 'xstate';
import { afterEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../test/helpers/harness.js';
import { bytesPerStep, runFloorSteps } from './floor.js';
import { noopTool } from './noop-tool.js';

let h: Harness | undefined;
afterEach(() => {
  h?.session.actor.stop();
  h?.cleanup();
  h = undefined;
});

const counter = () => {
  const seen: Record<string, number> = {};
  const inspect = (e: InspectionEvent) => {
    if (e.type !== '@xstate.actor') return;
    const src = String((e.actorRef as { src?: unknown }).src ?? '');
    seen[src] = (seen[src] ?? 0) + 1;
  };
  return { seen, inspect };
};

describe('the step floor', () => {
  it("creates the actors bridle's session creates for the same turn, and no others", async () => {
    const floor = counter();
    await runFloorSteps(3, floor.inspect);
    const bridle = counter();
    h = createHarness((_r, i) => (i < 2 ? { toolCalls: [{ name: 'noop', arguments: { n: i } }] } : { text: 'done' }), { tools: [noopTool], inspect: bridle.inspect });
    expect(await h.session.run('go')).toMatchObject({ reason: 'completed', steps: 3 });
    expect(floor.seen).toEqual(bridle.seen);
    expect(floor.seen).toMatchObject({ step: 3, streamModel: 3, toolCall: 2, decideCall: 2, executeTool: 2 });
  });

  it('counts the bytes a run allocates, garbage included', async () => {
    let keep: number[] = [];
    const perStep = await bytesPerStep(async (steps) => {
      for (let i = 0; i < steps; i++) keep = new Array<number>(1000).fill(0.5);
    }, 2000);
    expect(keep).toHaveLength(1000);
    // 1,000 doubles a step, 8 bytes each, and the array's own few words.
    expect(perStep).toBeGreaterThan(8000);
    expect(perStep).toBeLessThan(8800);
  });
});
