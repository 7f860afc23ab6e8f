/**
 * Durable steps on Postgres (docs/design.md §8, ADR 0025), beside the JSONL store's:
 * one session alone, then 64 at once in this process sharing one pool (their
 * commits share the database's group commit), each step a no-op tool call
 * whose dispatch and result are committed before it goes on. Throughput is
 * steps per wall-clock second, and per core of this machine; bridle's own
 * CPU per step beside it. Take-over: how long a second worker takes to have
 * a session whose owner died — the claim of an expired lease, the read and
 * the repair commit — with the lease's expiry excluded and included.
 *
 * The database: `BRIDLE_BENCH_PG_URL` (or `BRIDLE_TEST_PG_URL`), else a
 * throwaway cluster from Debian's binaries, fsync on; without either the
 * figures are skipped, saying so.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createPostgresSessionStore } from '../adapters/store/postgres.js';
import { closePostgresPools } from '../adapters/store/postgres-pool.js';
import { LOG_FORMAT } from '../log/entries-session.js';
import { planRepair } from '../log/repair.js';
import { Recorder } from '../log/recorder.js';
import type { SessionStore } from '../ports/store.js';
import { findPostgresBin, startThrowawayPostgres, withDatabase } from '../test/helpers/postgres-cluster.js';
import { benchSession } from './session.js';
import { median, repeat } from './stats.js';
import { crossWorkerFanout, forwardedRoundTrips } from './workers.js';

let made = 0;

/** `sessions` sessions at once, `steps` steps each; steps per second (wall), and bridle's CPU µs per step. */
async function concurrent(sessions: number, steps: number, store: () => { store?: SessionStore; dir?: string }): Promise<{ perSecond: number; cpuUsPerStep: number }> {
  const all = Array.from({ length: sessions }, (_, k) => {
    const s = store();
    return benchSession({
      id: `bench-${process.pid}-${++made}-${k}`,
      respond: (_r, i) => (i < steps - 1 ? { toolCalls: [{ name: 'noop', arguments: { n: i } }] } : { text: 'done' }),
      maxSteps: steps + 1,
      ...(s.store ? { store: s.store } : {}),
      ...(s.dir ? { dir: s.dir } : {}),
    });
  });
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  const outs = await Promise.all(all.map((s) => s.run('go')));
  const ns = Number(process.hrtime.bigint() - start);
  const used = process.cpuUsage(cpu);
  await Promise.all(all.map((s) => s.close()));
  for (const o of outs) if (o.steps !== steps || o.reason !== 'completed') throw new Error(`bench turn ended ${o.reason} after ${o.steps} steps`);
  const total = sessions * steps;
  return { perSecond: total / (ns / 1e9), cpuUsPerStep: (used.user + used.system) / total };
}

/** A session whose owner died holding its lease (it stops renewing), taken over by a second worker: ms after expiry, and in all. */
async function takeover(url: string, leaseMs: number): Promise<{ afterExpiryMs: number; totalMs: number }> {
  const id = `takeover-${process.pid}-${++made}`;
  const dead = createPostgresSessionStore({ url, leaseMs }, { pid: 1, host: 'dead-worker', renew: false });
  const lock = await dead.claim(id);
  const r = new Recorder(dead.open(id, { lock }), () => 0);
  r.append({ kind: 'session/start', id, cwd: '/w', model: 'm', depth: 0, parent: null, format: LOG_FORMAT });
  // Format 2: a turn names the input it takes (ADR 0021).
  const from = r.append({ kind: 'session/input', mode: 'followup', text: 'go', origin: 'user' }).seq;
  r.append({ kind: 'turn/start', turn: 't1', input: 'go', from });
  await r.flush();
  const died = process.hrtime.bigint();
  const next = createPostgresSessionStore({ url, leaseMs }, { pid: 2, host: 'next-worker' });
  for (;;) {
    const tryAt = process.hrtime.bigint();
    const lease = await next.claim(id).catch(() => undefined);
    if (!lease) {
      await new Promise((res) => setTimeout(res, 5));
      continue;
    }
    const lines = (await next.tail(id))!;
    const entries = lines.map((l) => JSON.parse(l));
    const plan = planRepair(entries, {});
    if (!plan.ok) throw new Error('the bench session does not repair');
    const log = next.open(id, { lock: lease });
    const rec = new Recorder(log, () => 1, entries);
    for (const d of plan.drafts) rec.append(d);
    await rec.flush();
    const done = process.hrtime.bigint();
    await log.close();
    return { afterExpiryMs: Number(done - tryAt) / 1e6, totalMs: Number(done - died) / 1e6 };
  }
}

export async function bench(): Promise<{ label: string; value: Record<string, unknown> }> {
  let url = process.env.BRIDLE_BENCH_PG_URL || process.env.BRIDLE_TEST_PG_URL;
  let stop: (() => void) | undefined;
  if (!url) {
    const bin = findPostgresBin();
    if (!bin) return { label: 'postgres', value: { skipped: 'Postgres is not installed (apt-get install postgresql), and BRIDLE_BENCH_PG_URL is not set' } };
    const cluster = startThrowawayPostgres(bin);
    stop = cluster.stop;
    url = cluster.url;
  }
  const name = `bridle_bench_${process.pid}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} ENCODING 'UTF8' TEMPLATE template0`);
  const db = withDatabase(url, name);
  const cores = availableParallelism();
  const dirs: string[] = [];
  const jsonl = () => {
    const dir = mkdtempSync(join(tmpdir(), 'bridle-bench-'));
    dirs.push(dir);
    return { dir };
  };
  try {
    const postgres = () => ({ store: createPostgresSessionStore({ url: db, poolSize: 32 }) });
    await concurrent(4, 100, postgres);
    const one = (f: () => { store?: SessionStore; dir?: string }) => repeat(3, async () => (await concurrent(1, 300, f)).perSecond).then(median);
    const many = async (f: () => { store?: SessionStore; dir?: string }) => {
      const runs = [];
      for (let i = 0; i < 3; i++) runs.push(await concurrent(64, 50, f));
      return { perSecond: median(runs.map((x) => x.perSecond)), cpuUsPerStep: median(runs.map((x) => x.cpuUsPerStep)) };
    };
    const pg1 = await one(postgres);
    const pg64 = await many(postgres);
    const js1 = await one(jsonl);
    const js64 = await many(jsonl);
    const takeovers = [];
    for (let i = 0; i < 3; i++) takeovers.push(await takeover(db, 500));
    const fanout = await crossWorkerFanout(db);
    const forwarded = await forwardedRoundTrips(db);
    const round = (n: number) => Math.round(n);
    return {
      label: 'postgres',
      value: {
        cores,
        stepsPerSecond: { postgres: { sessions1: round(pg1), sessions64: round(pg64.perSecond) }, jsonl: { sessions1: round(js1), sessions64: round(js64.perSecond) } },
        stepsPerSecondPerCore: { postgres: { sessions1: round(pg1 / cores), sessions64: round(pg64.perSecond / cores) }, jsonl: { sessions1: round(js1 / cores), sessions64: round(js64.perSecond / cores) } },
        bridleCpuUsPerStep64: { postgres: round(pg64.cpuUsPerStep), jsonl: round(js64.cpuUsPerStep) },
        takeoverMs: { leaseMs: 500, afterExpiry: Number(median(takeovers.map((t) => t.afterExpiryMs)).toFixed(1)), expiryIncluded: round(median(takeovers.map((t) => t.totalMs))) },
        fanoutToAnotherWorkerMs: { entries: fanout.entries, p50: fanout.p50Ms, p99: fanout.p99Ms },
        liveTextToAnotherWorkerMs: { chunks: fanout.liveChunks, lost: fanout.liveLost, timed: fanout.liveTimed, p50: fanout.liveP50Ms, p99: fanout.liveP99Ms },
        forwardedRoundTripMs: { rounds: forwarded.rounds, answerLocal: forwarded.answerLocalMs, answerForwarded: forwarded.answerForwardedMs, cancelForwarded: forwarded.cancelForwardedMs },
      },
    };
  } finally {
    await closePostgresPools();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    stop?.();
  }
}
