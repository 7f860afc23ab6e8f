/**
 * The crash soak on Postgres, short (issue #26): every `bridle run`/`chat`/`resume` of the trials on `--store
 * <url>` (one database, each trial its own sessions), one SIGKILL at each seeded moment — workflows and
 * delegations among them — and two from inside at a machine state's entry, each resumed once the dead writer's
 * lease expired, then every log of the tree read back through the Postgres store, verified and replayed through
 * the machines, and judged as on JSONL (`soak-judge.ts`). `npm run soak -- --store postgres` is the long version.
 * Skipped naming the package without Postgres; failed instead where system dependencies are required (CI).
 */
import { expect, it } from 'vitest';
import { soak } from '../../bench/soak.js';
import { formatReport } from '../../bench/soak-report.js';
import { MOMENTS } from '../../bench/soak-moments.js';
import { postgresSoakStore } from '../../bench/soak-store.js';
import { describeWithPostgres } from '../helpers/postgres.js';
import { cliBuilt } from './cli-world.js';

const PINNED = [
  { point: 'tool-call.executing', scenario: 'tools' },
  { point: 'subagent.running', scenario: 'workflow' },
] as const;

describeWithPostgres('crash soak on Postgres (one kill at each moment, two at machine states)', (db) => {
  it.runIf(cliBuilt)('7 SIGKILLs at seeded moments and 2 at machine states, on --store postgres: every log of every tree verifies and replays, no body ran twice, no acknowledged input is lost', async () => {
    const store = postgresSoakStore(db.url(), 'the suite database');
    let r: Awaited<ReturnType<typeof soak>>;
    try {
      r = await soak({ kills: MOMENTS.length, concurrency: 3, seed: 1, pinned: PINNED, store });
    } finally {
      await store.close();
    }
    const summary = [...formatReport(r), ...r.problems].join('\n');
    expect(r.store).toBe('postgres');
    expect(r.kills, summary).toBe(MOMENTS.length + PINNED.length);
    for (const m of MOMENTS) expect(r.byMoment[m], `${m}\n${summary}`).toBeGreaterThan(0);
    for (const { point } of PINNED) expect(r.byState[point], `${point}\n${summary}`).toBe(1);
    expect(r.childLogs, summary).toBeGreaterThan(0);
    expect({ unverified: r.unverified, ranTwice: r.ranTwice, inputsLost: r.inputsLost, childUnverifiable: r.childUnverifiable }, summary).toEqual({ unverified: 0, ranTwice: 0, inputsLost: 0, childUnverifiable: 0 });
    expect({ ranUndispatched: r.ranUndispatched, resumesFailed: r.resumesFailed }, summary).toEqual({ ranUndispatched: 0, resumesFailed: 0 });
    // The checks had something to check.
    expect(r.marks).toBeGreaterThan(0);
    expect(r.inputs).toBeGreaterThan(MOMENTS.length);
  }, 180_000);
});
