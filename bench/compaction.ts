/**
 * Compaction time for a 1,000-step history: one session runs 1,000 steps of
 * a no-op tool (scripted model, memory store), then fresh sessions continue
 * its log and each times one manual compaction — measure, prune, plan,
 * summary request (answered at once by the scripted model), replacement.
 */
import { createSession } from '../runtime/session.js';
import { createScriptedProviderFromFunction } from '../adapters/model/scripted.js';
import { createMemoryStore } from '../adapters/store/memory.js';
import { isSummaryInstruction } from '../log/context/summary-prompt.js';
import type { Entry } from '../log/entries.js';
import { noopTool } from './noop-tool.js';
import { median } from './stats.js';
import { createMemorySubprocess } from '../adapters/subprocess/memory.js';

const SUMMARY = '## Request and intent\nbench\n## Key facts\nnone\n## Files touched\nnone\n## Errors and fixes\nnone\n## Current work\nnone\n## Next step\nnone';

function session(steps: number, existing: readonly Entry[] = []) {
  let t = 0;
  return createSession({
    id: 'bench-compaction',
    cwd: '/nonexistent',
    bridleHome: '/nonexistent-home',
    model: createScriptedProviderFromFunction(
      (req, i) => (isSummaryInstruction(req.messages.at(-1)) ? { text: SUMMARY } : i < steps - 1 ? { toolCalls: [{ name: 'noop', arguments: { n: i } }] } : { text: 'done' }),
      { deltas: 1 },
    ),
    modelName: 'scripted-bench',
    store: createMemoryStore(),
    clock: () => t++,
    tools: [noopTool],
    subprocess: createMemorySubprocess(),
    approval: 'auto',
    maxSteps: steps + 1,
    repeatCall: false,
    agentsFiles: () => [],
    existing,
  });
}

/** Median milliseconds of one manual compaction of a `steps`-step history, over `runs` fresh sessions. */
export async function benchCompaction(steps = 1000, runs = 7): Promise<{ steps: number; medianMs: number }> {
  const first = session(steps);
  const out = await first.run('go');
  if (out.steps !== steps) throw new Error(`bench history ended ${out.reason} after ${out.steps} steps`);
  const history = first.recorder.entries.slice();
  await first.close();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const s = session(steps, history);
    const start = process.hrtime.bigint();
    const r = await s.compact();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
    if (r?.outcome !== 'compacted') throw new Error(`bench compaction ended ${r?.outcome ?? 'without starting'}`);
    await s.close();
  }
  return { steps, medianMs: median(times) };
}

/** For `npm run bench`. */
export async function bench(): Promise<{ label: string; value: Record<string, unknown> }> {
  return { label: 'compaction of a 1,000-step history', value: await benchCompaction() };
}
