/**
 * Course ch. 10, "pipeline() genuinely overlaps stages across items while
 * parallel() is a real barrier", through the whole path a model's script
 * takes: the workflow tool, the worker's QuickJS VM, the agent gate and real
 * child sessions. The combinators' own test (adapters/workflow/worker.test.ts)
 * runs them in process, so a VM, a gate or a tool that serialized agents
 * would pass it; this one does not.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createMemorySessionStore } from '../../adapters/store/memory.js';
import type { ScriptedResponse } from '../../adapters/model/scripted-script.js';
import type { EntryOf } from '../../log/entries.js';
import type { ModelRequest } from '../../log/messages.js';
import { createHarness, type Harness } from '../../test/helpers/harness.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

const whoOf = (req: ModelRequest) => {
  const m = req.messages.find((x) => x.role === 'user');
  return m?.role === 'user' ? m.content : '';
};

/** Resolves with whether `p` settled within `ms`: a pipeline without overlap never lets it, and must not hang the test. */
const within = (p: Promise<unknown>, ms: number) => Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

const PIPELINE = `return await pipeline(['a', 'b'], (x) => agent('first ' + x), (r) => agent('second, after ' + r));`;
const BARRIER = `
  const firsts = await parallel([() => agent('first a'), () => agent('first b')]);
  return await parallel(firsts.map((r) => () => agent('second, after ' + r)));`;

/** A parent whose model writes `script`; item b's first stage holds until item a's second stage has asked its model (or 3 s pass). */
async function runWorkflow(script: string) {
  let secondOfA!: () => void;
  const secondOfASeen = new Promise<void>((r) => (secondOfA = r));
  let overlapped: boolean | undefined;
  let parentAsked = 0;
  h = createHarness(
    async (req): Promise<ScriptedResponse> => {
      const who = whoOf(req);
      if (who === 'first a') return { text: 'a surveyed' };
      if (who === 'first b') {
        overlapped = await within(secondOfASeen, 3_000);
        return { text: 'b surveyed' };
      }
      if (who.startsWith('second, after a')) {
        secondOfA();
        return { text: 'a fixed' };
      }
      if (who.startsWith('second, after b')) return { text: 'b fixed' };
      return parentAsked++ === 0 ? { toolCalls: [{ name: 'workflow', arguments: { script } }] } : { text: 'done' };
    },
    { settings: { maxDepth: 1 }, services: { store: createMemorySessionStore() } },
  );
  const out = await h.session.run('orchestrate');
  const result = h.entries().find((e): e is EntryOf<'tool/result'> => e.kind === 'tool/result' && e.name === 'workflow')!;
  return { out, result, overlapped };
}

describe('pipeline() over real child sessions (course ch. 10)', () => {
  it('pipeline() genuinely overlaps stages across items: item a is in stage 2 while item b is still in stage 1', async () => {
    const { out, result, overlapped } = await runWorkflow(PIPELINE);
    expect(out.reason).toBe('completed');
    expect(result.status).toBe('ok');
    expect(JSON.parse(result.content)).toEqual(['a fixed', 'b fixed']);
    expect(overlapped).toBe(true);
  });

  it('parallel() is a real barrier: no second stage starts before every first stage has ended', async () => {
    const { result, overlapped } = await runWorkflow(BARRIER);
    expect(JSON.parse(result.content)).toEqual(['a fixed', 'b fixed']);
    expect(overlapped).toBe(false);
  }, 15_000);
});
