/**
 * The bench's rows of one store's sessions over several processes (ADR 0081; Postgres, ADR 0107): every process runs
 * its share, each session's log ends up whole in the one directory or database, and the figure counts every
 * process's steps. The workers are
 * the built file's (a forked child runs JavaScript), so the test needs `npm run build`, as the CLI's tests do.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readLogLines } from '../adapters/store/jsonl-read.js';
import { createPostgresSessionStore } from '../adapters/store/postgres.js';
import { closePostgresPools } from '../adapters/store/postgres-pool.js';
import { describeWithPostgres } from '../test/helpers/postgres.js';
import { tempDir } from '../test/helpers/temp.js';

const built = new URL('../dist/bench/group-commit-processes.js', import.meta.url);
let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe.skipIf(!existsSync(built))('group commit over processes', () => {
  it('5 sessions of one directory over 2 processes: each log is whole, every step counted, a sync per session turn', async () => {
    const { jsonlAcrossProcesses } = (await import(built.href)) as typeof import('./group-commit-processes.js');
    dir = tempDir('bridle-procs-test-');
    const figure = await jsonlAcrossProcesses(dir, 5, 4, 2);
    const logs = readdirSync(dir).filter((f) => /^s\d+\.jsonl$/.test(f)).sort();
    expect(logs).toEqual(['s0.jsonl', 's1.jsonl', 's2.jsonl', 's3.jsonl', 's4.jsonl']);
    for (const f of logs) {
      const kinds = readLogLines(join(dir, f)).map((l) => (JSON.parse(l) as { kind: string }).kind);
      expect(kinds.filter((k) => k === 'step/end')).toHaveLength(4);
      expect(kinds.at(-2)).toBe('turn/end');
    }
    expect(figure.stepsPerSecond).toBeGreaterThan(0);
    // The turn's end (and the input's admission) flush each session: never no sync, never one a step.
    expect(figure.fdatasyncsPerStep).toBeGreaterThan(0);
    expect(figure.fdatasyncsPerStep).toBeLessThan(1);
  }, 60_000);
});

describeWithPostgres('group commit over processes on Postgres', (db) => {
  it.skipIf(!existsSync(built))('5 sessions of one database over 2 processes: each log is whole, every step counted, commits shared', async () => {
    const { postgresAcrossProcesses } = (await import(built.href)) as typeof import('./group-commit-processes.js');
    const url = await db.fresh();
    const figure = await postgresAcrossProcesses(url, 5, 4, 2);
    const store = createPostgresSessionStore({ url });
    try {
      for (let k = 0; k < 5; k++) {
        const kinds = (await store.read(`s${k}`))!.lines.map((l) => (JSON.parse(l) as { kind: string }).kind);
        expect(kinds.filter((x) => x === 'step/end')).toHaveLength(4);
        expect(kinds.at(-2)).toBe('turn/end');
      }
    } finally {
      await closePostgresPools();
    }
    expect(figure.stepsPerSecond).toBeGreaterThan(0);
    expect(figure.fdatasyncsPerStep).toBeUndefined();
    // Each session's admission and turn end need a commit; the processes' rounds carry them, never one a step.
    expect(figure.commitsPerStep).toBeGreaterThan(0);
    expect(figure.commitsPerStep).toBeLessThan(1);
  }, 60_000);
});
