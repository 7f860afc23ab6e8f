/**
 * The sweep, with delegation (`test/sweep/delegation.ts`): hostile worlds
 * whose answers sometimes delegate — spawn, fork, mock-remote, a crashing
 * provider, one that does not exist — while cancels land at random. Every
 * log of the tree (the parent's and each child's) must keep the sweep's
 * invariants, the tree's own, and replay through the machines byte for
 * byte.
 *
 *   BRIDLE_SWEEP_SEEDS=1000 npx vitest run test/sweep/delegation.test.ts   more seeds (default 80)
 *   BRIDLE_SWEEP_SEED=7 npx vitest run test/sweep/delegation.test.ts       one seed
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Entry } from '../../log/entries.js';
import { replayThroughMachines } from '../../replay/replay.js';
import { toolsOfLog } from '../../replay/setup.js';
import { checkTree, delegateTools, delegating, delegationWorld } from './delegation.js';
import { checkWorld } from './invariants.js';
import { runWorld } from './run-world.js';
import { sweepTools } from './tools.js';

const one = process.env.BRIDLE_SWEEP_SEED;
const count = Math.max(1, Math.round(Number(process.env.BRIDLE_SWEEP_SEEDS ?? 250) / 3));
const seeds = one !== undefined ? [Number(one)] : Array.from({ length: count }, (_, i) => 10_001 + i);
const seen = new Map<string, number>();
const note = (k: string) => seen.set(k, (seen.get(k) ?? 0) + 1);

async function replays(es: readonly Entry[], who: string): Promise<string[]> {
  const r = await replayThroughMachines(es, toolsOfLog(es, sweepTools({ started: [] })));
  return r.identical ? [] : [`I12: ${who} replays differently at line ${r.firstDifference}${r.note ? ` (${r.note})` : ''}`];
}

describe('the sweep, with delegation', () => {
  it.each(seeds)('seed %i', async (seed) => {
    const make = delegating(seed);
    let sessions: ReturnType<ReturnType<typeof delegating>>['sessions'] | undefined;
    const run = await runWorld(seed, (m) => {
      const d = make(m);
      sessions = d.sessions;
      return d;
    });
    try {
      const es = run.h.entries();
      const tree = checkTree(sessions!, 'test-session', es);
      const isParents = (r: { request: { messages: readonly { role: string; content?: unknown }[] } }) => r.request.messages.find((m) => m.role === 'user')?.content === run.world.first;
      const problems = checkWorld(run, { extra: delegateTools(es), children: tree.children, isParents });
      problems.push(...tree.problems);
      for (const e of [es, ...tree.children].flat()) {
        if (e.kind === 'subagent/end') note(`child ${e.reason}${e.code ? ` ${e.code}` : ''}`);
        if (e.kind === 'tool/result' && e.name === 'delegate') note(`delegate ${e.status}${e.code ? ` ${e.code}` : ''}`);
      }
      if (problems.length === 0) {
        problems.push(...(await replays(es, 'the parent')));
        for (const c of tree.children) problems.push(...(await replays(c, (c[0] as { id: string }).id)));
      }
      if (problems.length > 0) expect.fail(`seed ${seed} broke ${problems.length} invariant(s):\n  ${problems.join('\n  ')}\nworld: ${JSON.stringify({ ...run.world, delegation: delegationWorld(seed) })}\nreproduce: BRIDLE_SWEEP_SEED=${seed} npx vitest run test/sweep/delegation.test.ts`);
    } finally {
      await run.h.session.close();
      run.h.cleanup();
    }
  });

  afterAll(() => {
    if (one !== undefined) return;
    if (process.env.BRIDLE_SWEEP_STATS) console.log([...seen].sort().map(([k, n]) => `${k}: ${n}`).join('\n'));
    const wanted = ['delegate ok', 'delegate error SUBAGENT_CRASHED', 'delegate error SUBAGENT_PROVIDER_UNKNOWN', 'delegate error SUBAGENT_FAILED', 'child completed', 'child aborted ABORTED', 'child error SUBAGENT_CRASHED'];
    if (seeds.length >= 60) expect(wanted.filter((w) => !seen.has(w))).toEqual([]);
  });
});
