/**
 * Group commit with the sessions of one JSONL directory spread over several processes (ADR 0081): each session's
 * writer lock is its own file's, so processes can host disjoint sessions of one directory side by side, and a
 * 2-core machine runs two of bridle's single-threaded hosts at once. The parent forks `processes` children of this
 * file; each makes its share of the sessions, says it is ready, and runs them when told to go. The figure is every
 * process's steps over the wall time from "go" to the last "done", so starting the processes is not counted, as
 * making the sessions is not counted in the single-process rows (`group-commit.ts`).
 */
import { fork, type ChildProcess } from 'node:child_process';
import * as nodeFs from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createJsonlStore, type JsonlFs } from '../adapters/store/jsonl.js';
import { benchSession } from './session.js';

interface Job {
  dir: string;
  /** This process's sessions: files `s<first>` … `s<first + count - 1>` of `dir`. */
  first: number;
  count: number;
  steps: number;
}

type FromChild = { ready: true } | { done: true; fdatasyncs: number; cpuUs: number; error?: string };

export interface ProcessesFigure {
  stepsPerSecond: number;
  fdatasyncsPerStep: number;
  /** CPU (user + system) of every child over its run, per step: what a step cost with the processes side by side. */
  cpuUsPerStep: number;
}

/** `sessions` sessions of `dir`, `steps` durable steps each, over `processes` processes. */
export async function jsonlAcrossProcesses(dir: string, sessions: number, steps: number, processes: number): Promise<ProcessesFigure> {
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
      c.send({ dir, first, count, steps } satisfies Job);
    }
    await Promise.all(children.map(next));
    const dones = children.map(next);
    const start = process.hrtime.bigint();
    for (const c of children) c.send('go');
    const outs = await Promise.all(dones);
    const ns = Number(process.hrtime.bigint() - start);
    let fdatasyncs = 0;
    let cpuUs = 0;
    for (const o of outs) {
      if (!('done' in o)) throw new Error('bench worker answered out of turn');
      if (o.error) throw new Error(`bench worker: ${o.error}`);
      fdatasyncs += o.fdatasyncs;
      cpuUs += o.cpuUs;
    }
    const total = sessions * steps;
    return { stepsPerSecond: Math.round(total / (ns / 1e9)), fdatasyncsPerStep: Number((fdatasyncs / total).toFixed(3)), cpuUsPerStep: Math.round(cpuUs / total) };
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill();
  }
}

/** A child: its sessions made, then run on "go"; it answers with its fdatasyncs and CPU and exits. */
async function worker(job: Job): Promise<void> {
  let syncs = 0;
  const fs: JsonlFs = { ...nodeFs, fdatasync: (fd, done) => (syncs++, nodeFs.fdatasync(fd, done)) };
  const send = (m: FromChild) => new Promise<void>((resolve) => process.send!(m, () => resolve()));
  const respond = (_r: unknown, i: number) => (i < job.steps - 1 ? { toolCalls: [{ name: 'noop', arguments: { n: i } }] } : { text: 'done' });
  // A warm-up on sessions of its own (their files beside the measured ones), as the single-process rows have one.
  const warm = Array.from({ length: 4 }, (_, k) => benchSession({ id: `warm-${process.pid}-${k}`, respond, maxSteps: job.steps + 1, store: createJsonlStore(join(job.dir, `warm-${process.pid}-${k}.jsonl`), { fs }) }));
  await Promise.all(warm.map((s) => s.run('go')));
  await Promise.all(warm.map((s) => s.close()));
  const all = Array.from({ length: job.count }, (_, k) =>
    benchSession({ id: `procs-${process.pid}-${k}`, respond, maxSteps: job.steps + 1, store: createJsonlStore(join(job.dir, `s${job.first + k}.jsonl`), { fs }) }),
  );
  const go = new Promise<void>((resolve) => process.once('message', () => resolve()));
  await send({ ready: true });
  await go;
  syncs = 0;
  const cpu = process.cpuUsage();
  try {
    const outs = await Promise.all(all.map((s) => s.run('go')));
    const used = process.cpuUsage(cpu);
    await Promise.all(all.map((s) => s.close()));
    const bad = outs.find((o) => o.steps !== job.steps || o.reason !== 'completed');
    await send({ done: true, fdatasyncs: syncs, cpuUs: used.user + used.system, ...(bad ? { error: `turn ended ${bad.reason} after ${bad.steps} steps` } : {}) });
  } catch (err) {
    await send({ done: true, fdatasyncs: syncs, cpuUs: 0, error: err instanceof Error ? err.message : String(err) });
  }
  process.disconnect();
}

if (process.argv.includes('--group-commit-worker')) process.once('message', (job) => void worker(job as Job));
