/**
 * Group commit with the sessions of one JSONL directory, or of one Postgres database, spread over several processes
 * (ADR 0081, 0107): each session's writer claim is its own (its file's lock, its row's lease), so processes can host
 * disjoint sessions of one store side by side, and a 2-core machine runs two of bridle's single-threaded hosts at
 * once. On Postgres each process has its own pool and commits its own sessions' rounds. The parent forks `processes` children of this
 * file; each makes its share of the sessions, says it is ready, and runs them when told to go. The figure is every
 * process's steps over the wall time from "go" to the last "done", so starting the processes is not counted, as
 * making the sessions is not counted in the single-process rows (`group-commit.ts`).
 */
import { fork, type ChildProcess } from 'node:child_process';
import * as nodeFs from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createJsonlStore, type JsonlFs } from '../adapters/store/jsonl.js';
import { createPostgresSessionStore } from '../adapters/store/postgres.js';
import { commitRoundsFor } from '../adapters/store/postgres-commit.js';
import { closePostgresPools } from '../adapters/store/postgres-pool.js';
import { benchSession } from './session.js';

/** Where the sessions are: files of one JSONL directory, or rows of one Postgres database. */
export type Where = { kind: 'jsonl'; dir: string } | { kind: 'postgres'; url: string };

interface Job {
  where: Where;
  /** This process's sessions: `s<first>` … `s<first + count - 1>` (files of the directory, ids in the database). */
  first: number;
  count: number;
  steps: number;
}

/** `flushes`: fdatasyncs on JSONL, commit rounds on Postgres. */
type FromChild = { ready: true } | { done: true; flushes: number; cpuUs: number; error?: string };

export interface ProcessesFigure {
  stepsPerSecond: number;
  /** fdatasyncs per step on JSONL, commits per step on Postgres. */
  fdatasyncsPerStep?: number;
  commitsPerStep?: number;
  /** CPU (user + system) of every child over its run, per step: what a step cost with the processes side by side. */
  cpuUsPerStep: number;
}

/** `sessions` sessions of `dir`, `steps` durable steps each, over `processes` processes. */
export function jsonlAcrossProcesses(dir: string, sessions: number, steps: number, processes: number): Promise<ProcessesFigure> {
  return acrossProcesses({ kind: 'jsonl', dir }, sessions, steps, processes);
}

/** `sessions` sessions of the database at `url`, `steps` durable steps each, over `processes` processes. */
export function postgresAcrossProcesses(url: string, sessions: number, steps: number, processes: number): Promise<ProcessesFigure> {
  return acrossProcesses({ kind: 'postgres', url }, sessions, steps, processes);
}

async function acrossProcesses(where: Where, sessions: number, steps: number, processes: number): Promise<ProcessesFigure> {
  const me = fileURLToPath(import.meta.url);
  const per = Math.ceil(sessions / processes);
  const children: ChildProcess[] = [];
  const next = (c: ChildProcess) => new Promise<FromChild>((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`bench worker exited ${code} before it answered`));
    c.once('exit', onExit);
    c.once('message', (m) => (c.off('exit', onExit), resolve(m as FromChild)));
  });
  try {
    for (let p = 0; p < processes; p++) {
      const first = p * per;
      const count = Math.min(per, sessions - first);
      if (count <= 0) break;
      const c = fork(me, ['--group-commit-worker'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      children.push(c);
      c.send({ where, first, count, steps } satisfies Job);
    }
    await Promise.all(children.map(next));
    const dones = children.map(next);
    const start = process.hrtime.bigint();
    for (const c of children) c.send('go');
    const outs = await Promise.all(dones);
    const ns = Number(process.hrtime.bigint() - start);
    let flushes = 0;
    let cpuUs = 0;
    for (const o of outs) {
      if (!('done' in o)) throw new Error('bench worker answered out of turn');
      if (o.error) throw new Error(`bench worker: ${o.error}`);
      flushes += o.flushes;
      cpuUs += o.cpuUs;
    }
    const total = sessions * steps;
    const perStep = Number((flushes / total).toFixed(3));
    return { stepsPerSecond: Math.round(total / (ns / 1e9)), ...(where.kind === 'jsonl' ? { fdatasyncsPerStep: perStep } : { commitsPerStep: perStep }), cpuUsPerStep: Math.round(cpuUs / total) };
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill();
  }
}

/** A process's stores: one per session, and the count of what made them durable (fdatasyncs, or commit rounds). */
export async function storesOf(where: Where): Promise<{ store: (name: string) => ReturnType<typeof createJsonlStore> | ReturnType<typeof createPostgresSessionStore>; flushes: () => number }> {
  if (where.kind === 'jsonl') {
    let syncs = 0;
    const fs: JsonlFs = { ...nodeFs, fdatasync: (fd, done) => (syncs++, nodeFs.fdatasync(fd, done)) };
    return { store: (name) => createJsonlStore(join(where.dir, `${name}.jsonl`), { fs }), flushes: () => syncs };
  }
  // One pool for the process, as `serve` has: every session's store shares it, and its commit rounds.
  const store = () => createPostgresSessionStore({ url: where.url, poolSize: 32 });
  const rounds = commitRoundsFor(await store().pool());
  return { store, flushes: () => rounds.stats.rounds };
}

/** A child: its sessions made, then run on "go"; it answers with its flushes and CPU and exits. */
async function worker(job: Job): Promise<void> {
  const { store, flushes } = await storesOf(job.where);
  const send = (m: FromChild) => new Promise<void>((resolve) => process.send!(m, () => resolve()));
  const respond = (_r: unknown, i: number) => (i < job.steps - 1 ? { toolCalls: [{ name: 'noop', arguments: { n: i } }] } : { text: 'done' });
  // A warm-up on sessions of its own (beside the measured ones), as the single-process rows have one.
  const warm = Array.from({ length: 4 }, (_, k) => benchSession({ id: `warm-${process.pid}-${k}`, respond, maxSteps: job.steps + 1, store: store(`warm-${process.pid}-${k}`) }));
  await Promise.all(warm.map((s) => s.run('go')));
  await Promise.all(warm.map((s) => s.close()));
  const all = Array.from({ length: job.count }, (_, k) => benchSession({ id: `s${job.first + k}`, respond, maxSteps: job.steps + 1, store: store(`s${job.first + k}`) }));
  const go = new Promise<void>((resolve) => process.once('message', () => resolve()));
  await send({ ready: true });
  await go;
  const before = flushes();
  const cpu = process.cpuUsage();
  try {
    const outs = await Promise.all(all.map((s) => s.run('go')));
    const used = process.cpuUsage(cpu);
    await Promise.all(all.map((s) => s.close()));
    const bad = outs.find((o) => o.steps !== job.steps || o.reason !== 'completed');
    await send({ done: true, flushes: flushes() - before, cpuUs: used.user + used.system, ...(bad ? { error: `turn ended ${bad.reason} after ${bad.steps} steps` } : {}) });
  } catch (err) {
    await send({ done: true, flushes: flushes() - before, cpuUs: 0, error: err instanceof Error ? err.message : String(err) });
  }
  if (job.where.kind === 'postgres') await closePostgresPools();
  process.disconnect();
}

if (process.argv.includes('--group-commit-worker')) process.once('message', (job) => void worker(job as Job));
