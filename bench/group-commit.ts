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
import * as nodeFs from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createJsonlStore, type JsonlFs } from '../adapters/store/jsonl.js';
import { createPostgresSessionStore } from '../adapters/store/postgres.js';
import { commitRoundsFor } from '../adapters/store/postgres-commit.js';
import { closePostgresPools } from '../adapters/store/postgres-pool.js';
import type { Services } from '../runtime/session-options.js';
import { findPostgresBin, startThrowawayPostgres, withDatabase } from '../test/helpers/postgres-cluster.js';
import { noopOnceTool, noopTool } from './noop-tool.js';
import { benchSession } from './session.js';
import { jsonlAcrossProcesses, postgresAcrossProcesses, type ProcessesFigure } from './group-commit-processes.js';

let made = 0;
const SIZES = [
  { sessions: 1, steps: 300 },
  { sessions: 64, steps: 50 },
  { sessions: 256, steps: 20 },
] as const;

/** The tool each step calls: `noop` (read-only, idempotent) or `noop_once` (neither: flushed before and after its body). */
type StepTool = 'noop' | 'noop_once';

/** `sessions` sessions at once, `steps` durable steps each, each step one call of `tool`; steps per wall-clock second. */
async function run(sessions: number, steps: number, store: (k: number) => Services['store'], tool: StepTool = 'noop'): Promise<number> {
  const all = Array.from({ length: sessions }, (_, k) =>
    benchSession({
      id: `group-${process.pid}-${++made}-${k}`,
      respond: (_r, i) => (i < steps - 1 ? { toolCalls: [{ name: tool, arguments: { n: i } }] } : { text: 'done' }),
      maxSteps: steps + 1,
      store: store(k),
      ...(tool === 'noop' ? {} : { tools: [noopTool, noopOnceTool] }),
    }),
  );
  const start = process.hrtime.bigint();
  const outs = await Promise.all(all.map((s) => s.run('go')));
  const ns = Number(process.hrtime.bigint() - start);
  await Promise.all(all.map((s) => s.close()));
  for (const o of outs) if (o.steps !== steps || o.reason !== 'completed') throw new Error(`bench turn ended ${o.reason} after ${o.steps} steps`);
  return (sessions * steps) / (ns / 1e9);
}

async function jsonl(): Promise<Record<string, { stepsPerSecond: number; fdatasyncsPerStep: number }>> {
  let syncs = 0;
  const fs: JsonlFs = { ...nodeFs, fdatasync: (fd, done) => (syncs++, nodeFs.fdatasync(fd, done)) };
  const out: Record<string, { stepsPerSecond: number; fdatasyncsPerStep: number }> = {};
  for (const { sessions, steps } of SIZES) {
    const dir = mkdtempSync(join(tmpdir(), 'bridle-group-'));
    syncs = 0;
    try {
      const perSecond = await run(sessions, steps, (k) => createJsonlStore(join(dir, `s${k}.jsonl`), { fs }));
      out[`sessions${sessions}`] = { stepsPerSecond: Math.round(perSecond), fdatasyncsPerStep: Number((syncs / (sessions * steps)).toFixed(3)) };
    } finally {
      rmSync(dir, { recursive: true, force: true });
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

async function postgres(url: string): Promise<Record<string, { stepsPerSecond: number; commitsPerStep: number }>> {
  const store = () => createPostgresSessionStore({ url, poolSize: 32 });
  const rounds = commitRoundsFor(await store().pool());
  const out: Record<string, { stepsPerSecond: number; commitsPerStep: number }> = {};
  for (const { sessions, steps } of SIZES) {
    const before = rounds.stats.rounds;
    const perSecond = await run(sessions, steps, store);
    // The rounds also hold each session's close (its last flush): counted against its steps, as a cost of the run.
    out[`sessions${sessions}`] = { stepsPerSecond: Math.round(perSecond), commitsPerStep: Number(((rounds.stats.rounds - before) / (sessions * steps)).toFixed(3)) };
  }
  return out;
}

/**
 * The non-idempotent rows (ADR 0082): every step one `noop_once` call, whose dispatch must be durable before its body
 * runs and whose result before the step goes on. ADR 0072 predicts two flushes a step for one session alone (one per
 * durability point); ADR 0073, that sessions of one process share them (one fdatasync per file per point on JSONL,
 * one commit per round for every session on Postgres).
 */
async function jsonlNonIdempotent(): Promise<Record<string, { stepsPerSecond: number; fdatasyncsPerStep: number }>> {
  let syncs = 0;
  const fs: JsonlFs = { ...nodeFs, fdatasync: (fd, done) => (syncs++, nodeFs.fdatasync(fd, done)) };
  const out: Record<string, { stepsPerSecond: number; fdatasyncsPerStep: number }> = {};
  for (const { sessions, steps } of SIZES) {
    const dir = mkdtempSync(join(tmpdir(), 'bridle-group-once-'));
    syncs = 0;
    try {
      const perSecond = await run(sessions, steps, (k) => createJsonlStore(join(dir, `s${k}.jsonl`), { fs }), 'noop_once');
      out[`sessions${sessions}`] = { stepsPerSecond: Math.round(perSecond), fdatasyncsPerStep: Number((syncs / (sessions * steps)).toFixed(3)) };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return out;
}

async function postgresNonIdempotent(url: string): Promise<Record<string, { stepsPerSecond: number; commitsPerStep: number }>> {
  const store = () => createPostgresSessionStore({ url, poolSize: 32 });
  const rounds = commitRoundsFor(await store().pool());
  const out: Record<string, { stepsPerSecond: number; commitsPerStep: number }> = {};
  for (const { sessions, steps } of SIZES) {
    const before = rounds.stats.rounds;
    const perSecond = await run(sessions, steps, store, 'noop_once');
    out[`sessions${sessions}`] = { stepsPerSecond: Math.round(perSecond), commitsPerStep: Number(((rounds.stats.rounds - before) / (sessions * steps)).toFixed(3)) };
  }
  return out;
}

export async function bench(): Promise<{ label: string; value: Record<string, unknown> }> {
  await run(4, 50, () => undefined);
  const value: Record<string, unknown> = { jsonl: { ...(await jsonl()), ...(await jsonlProcesses()) } };
  const nonIdempotent: Record<string, unknown> = { jsonl: await jsonlNonIdempotent() };
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
    value.postgres = { ...(await postgres(withDatabase(url, name))), sessions64processes2: await postgresAcrossProcesses(withDatabase(url, name), 64, 50, 2) };
    nonIdempotent.postgres = await postgresNonIdempotent(withDatabase(url, name));
    return { label: 'groupCommit', value };
  } finally {
    await closePostgresPools();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
    stop?.();
  }
}

if (process.argv[1]?.endsWith('group-commit.js')) console.log(JSON.stringify((await bench()).value));
