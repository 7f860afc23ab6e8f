/**
 * Group commit across sessions (ADR 0073, issue #26 item 2): durable steps per second with 1, 64 and 256 sessions
 * running at once in this process, on JSONL and on Postgres (a throwaway cluster, fsync on, or
 * `BRIDLE_BENCH_PG_URL`), and what each step cost the disk: fdatasyncs per step on JSONL, commits (rounds) per
 * step on Postgres. Each step is a no-op tool call. The read-only rows call `noop` (read-only, idempotent: since ADR
 * 0072 its dispatch and result wait for no flush of their own, only the turn's end does); the non-idempotent rows
 * (`nonIdempotent`) call `noop_once`, whose dispatch is durable before its body and its result before the step goes on
 * (two durability points a step), so one session alone costs two syncs (two commits) a step, and many sessions share
 * them (ADR 0073, 0082).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { closePostgresPools } from '../adapters/store/postgres-pool.js';
import type { Services } from '../runtime/session-options.js';
import { findPostgresBin, startThrowawayPostgres, withDatabase } from '../test/helpers/postgres-cluster.js';
import { noopOnceTool, noopTool } from './noop-tool.js';
import { benchSession } from './session.js';
import { jsonlAcrossProcesses, postgresAcrossProcesses, storesOf, type ProcessesFigure } from './group-commit-processes.js';

let made = 0;
const SIZES = [
  { sessions: 1, steps: 300 },
  { sessions: 64, steps: 50 },
  { sessions: 256, steps: 20 },
] as const;

/** The tool each step calls: `noop` (read-only, idempotent) or `noop_once` (neither: flushed before and after its body). */
type StepTool = 'noop' | 'noop_once';

/** `sessions` sessions at once, `steps` durable steps each, each step one call of `tool`; steps per wall-clock second. */
async function run(sessions: number, steps: number, store: (id: string) => Services['store'], tool: StepTool = 'noop'): Promise<number> {
  const all = Array.from({ length: sessions }, (_, k) => {
    const id = `group-${process.pid}-${++made}-${k}`;
    return benchSession({
      id,
      respond: (_r, i) => (i < steps - 1 ? { toolCalls: [{ name: tool, arguments: { n: i } }] } : { text: 'done' }),
      maxSteps: steps + 1,
      store: store(id),
      ...(tool === 'noop' ? {} : { tools: [noopTool, noopOnceTool] }),
    });
  });
  const start = process.hrtime.bigint();
  const outs = await Promise.all(all.map((s) => s.run('go')));
  const ns = Number(process.hrtime.bigint() - start);
  await Promise.all(all.map((s) => s.close()));
  for (const o of outs) if (o.steps !== steps || o.reason !== 'completed') throw new Error(`bench turn ended ${o.reason} after ${o.steps} steps`);
  return (sessions * steps) / (ns / 1e9);
}

type Row = { stepsPerSecond: number; fdatasyncsPerStep?: number; commitsPerStep?: number };

/**
 * Each size's row on one store, every step one call of `tool`: steps per second, and what made them durable per step
 * (fdatasyncs on JSONL, commit rounds on Postgres). On Postgres the rounds also hold each session's close (its last
 * flush), counted against its steps as a cost of the run. A JSONL directory is made per size and removed after it.
 */
async function rows(kind: 'jsonl' | 'postgres', url: string, tool: StepTool): Promise<Record<string, Row>> {
  const out: Record<string, Row> = {};
  const pg = kind === 'postgres' ? await storesOf({ kind, url }) : undefined;
  for (const { sessions, steps } of SIZES) {
    const dir = pg ? undefined : mkdtempSync(join(tmpdir(), tool === 'noop' ? 'bridle-group-' : 'bridle-group-once-'));
    try {
      const { store, flushes } = pg ?? (await storesOf({ kind: 'jsonl', dir: dir! }));
      const before = flushes();
      const perSecond = await run(sessions, steps, store, tool);
      const perStep = Number(((flushes() - before) / (sessions * steps)).toFixed(3));
      out[`sessions${sessions}`] = { stepsPerSecond: Math.round(perSecond), ...(pg ? { commitsPerStep: perStep } : { fdatasyncsPerStep: perStep }) };
    } finally {
      if (dir) rmSync(dir, { recursive: true, force: true });
    }
  }
  return out;
}

/** 64 sessions of one JSONL directory over 2 processes (ADR 0081), a row beside the single-process ones. */
async function jsonlProcesses(): Promise<Record<string, ProcessesFigure>> {
  const dir = mkdtempSync(join(tmpdir(), 'bridle-group-procs-'));
  try {
    return { sessions64processes2: await jsonlAcrossProcesses(dir, 64, 50, 2) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function bench(): Promise<{ label: string; value: Record<string, unknown> }> {
  await run(4, 50, () => undefined);
  const value: Record<string, unknown> = { jsonl: { ...(await rows('jsonl', '', 'noop')), ...(await jsonlProcesses()) } };
  // The non-idempotent rows (ADR 0082): each step's `noop_once` is flushed before its body and its result before the
  // step goes on; ADR 0072 predicts two flushes a step for a session alone, ADR 0073 that sessions share them.
  const nonIdempotent: Record<string, unknown> = { jsonl: await rows('jsonl', '', 'noop_once') };
  value.nonIdempotent = nonIdempotent;
  let url = process.env.BRIDLE_BENCH_PG_URL || process.env.BRIDLE_TEST_PG_URL;
  let stop: (() => void) | undefined;
  if (!url) {
    const bin = findPostgresBin();
    if (!bin) {
      const skipped = { skipped: 'Postgres is not installed (apt-get install postgresql), and BRIDLE_BENCH_PG_URL is not set' };
      nonIdempotent.postgres = skipped;
      return { label: 'groupCommit', value: { ...value, postgres: skipped } };
    }
    const cluster = startThrowawayPostgres(bin);
    stop = cluster.stop;
    url = cluster.url;
  }
  const name = `bridle_group_${process.pid}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name} ENCODING 'UTF8' TEMPLATE template0`);
    // 64 sessions over 2 processes too, each with its own pool (ADR 0107), after the single-process rows.
    value.postgres = { ...(await rows('postgres', withDatabase(url, name), 'noop')), sessions64processes2: await postgresAcrossProcesses(withDatabase(url, name), 64, 50, 2) };
    nonIdempotent.postgres = await rows('postgres', withDatabase(url, name), 'noop_once');
    return { label: 'groupCommit', value };
  } finally {
    await closePostgresPools();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
    stop?.();
  }
}

if (process.argv[1]?.endsWith('group-commit.js')) console.log(JSON.stringify((await bench()).value));
