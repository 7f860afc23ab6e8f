/**
 * What live traces cost a session (ADR 0055): the same turns — 5 steps each,
 * a no-op call per step, a memory store — untraced, and traced to a local
 * OTLP/HTTP receiver through the official exporter, as `run` and the others
 * do it: entries handed over at each turn's end to the worker thread that
 * projects, encodes and posts them (ADR 0080). Time per step, the flush
 * included, and without it: the steady state a long-running process is in,
 * where the export runs beside the steps and the final flush is once per
 * process (its time is reported apart). The receiver runs in a process of its
 * own, as a collector does, so its parsing is not charged to the sessions'
 * thread. `BRIDLE_BENCH_PAIRS` sets the number of alternating pairs (9).
 */
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { LiveTraces } from '../adapters/tracing/live.js';
import { benchSession } from './session.js';
import { median } from './stats.js';

const TURNS = 100;
const STEPS = 5;
const PAIRS = Number(process.env.BRIDLE_BENCH_PAIRS) || 9;

interface Run {
  /** µs a step, the turns only. */
  steps: number;
  /** µs a step, the flush of what is still waiting included. */
  withFlush: number;
  /** ms the flush at the end took. */
  flushMs: number;
  /** CPU µs a step on the main thread, the turns only (NaN where Linux's schedstat is not there). */
  mainCpu: number;
  /** CPU µs a step of the whole process (every thread, the export worker's included), the turns and the flush. */
  processCpu: number;
}

/** ns of CPU the main thread has had: Linux's per-thread schedstat (Node 20 has no `threadCpuUsage`); NaN elsewhere. */
function mainThreadCpuNs(): number {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]);
  } catch {
    return Number.NaN;
  }
}

async function runTurns(live: LiveTraces | undefined): Promise<Run> {
  const session = benchSession({
    id: 'bench-live',
    respond: (_req, i) => (i % STEPS === STEPS - 1 ? { text: 'done' } : { toolCalls: [{ name: 'noop', arguments: { n: i } }] }),
    maxSteps: STEPS + 1,
    ...(live ? { plugins: [live.plugin] } : {}),
  });
  const cpu0 = process.cpuUsage();
  const main0 = mainThreadCpuNs();
  const start = process.hrtime.bigint();
  for (let t = 0; t < TURNS; t++) {
    const out = await session.run(`turn ${t}`);
    if (out.reason !== 'completed') throw new Error(`bench turn ended ${out.reason}`);
  }
  await session.close();
  const turnsEnd = process.hrtime.bigint();
  const main1 = mainThreadCpuNs();
  await live?.flush();
  const end = process.hrtime.bigint();
  const cpu = process.cpuUsage(cpu0);
  const perStep = (ns: bigint) => Number(ns) / 1000 / (TURNS * STEPS);
  return {
    steps: perStep(turnsEnd - start),
    withFlush: perStep(end - start),
    flushMs: Number(end - turnsEnd) / 1e6,
    mainCpu: (main1 - main0) / 1000 / (TURNS * STEPS),
    processCpu: (cpu.user + cpu.system) / (TURNS * STEPS),
  };
}

/** A receiver in a process of its own: it counts the spans it was sent and answers as a collector does. */
const RECEIVER = `
const http = require('node:http');
let spans = 0;
const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (d) => (body += d));
  req.on('end', () => { spans += (body.match(/"spanId"/g) || []).length; res.writeHead(200, { 'content-type': 'application/json' }).end('{}'); });
});
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', (m) => { if (m === 'count') process.send({ spans }); });
`;

export async function bench(): Promise<{ label: string; value: Record<string, unknown> }> {
  const receiver = fork('-e', [RECEIVER], { execArgv: [], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const next = () => new Promise<Record<string, number>>((r) => receiver.once('message', (m) => r(m as Record<string, number>)));
  const { port } = await next();
  const url = `http://127.0.0.1:${port}/v1/traces`;
  // One LiveTraces for the process, as `run` and the others have: its worker thread starts (and loads the
  // OpenTelemetry packages) once, in the warm-up, and each traced run's flush is counted.
  const live = new LiveTraces(url, { version: 'bench', env: {}, worker: true, warn: (l) => process.stderr.write(`bench: ${l}\n`) });
  const traced = () => runTurns(live);
  try {
    // Both paths warm (the first traced run also loads the OpenTelemetry packages), then untraced and traced runs
    // alternate, so a drift of the machine's load weighs on both alike; the ratio is the median of each pair's.
    for (let i = 0; i < 2; i++) await runTurns(undefined);
    await traced();
    const pairs: Array<[Run, Run]> = [];
    for (let i = 0; i < PAIRS; i++) pairs.push([await runTurns(undefined), await traced()]);
    const fixed = (n: number, d = 1) => Number(n.toFixed(d));
    const ratiosOf = (of: (r: Run) => number) => pairs.map(([u, t]) => of(t) / of(u)).sort((a, b) => a - b);
    const q = (ratios: number[], f: number) => fixed(ratios[Math.min(ratios.length - 1, Math.floor(f * ratios.length))]!, 3);
    const steady = ratiosOf((r) => r.steps);
    const flushed = ratiosOf((r) => r.withFlush);
    // CPU time, not wall: on a shared machine a step's wall time is mostly whose turn the scheduler gave it.
    const cpuOf = (of: (r: Run) => number) => {
      const u = pairs.map((p) => of(p[0])).sort((a, b) => a - b);
      const t = pairs.map((p) => of(p[1])).sort((a, b) => a - b);
      const r = ratiosOf(of);
      return {
        untracedUs: fixed(median(u)),
        untracedRange: [fixed(u[0]!), fixed(u[u.length - 1]!)],
        tracedUs: fixed(median(t)),
        tracedRange: [fixed(t[0]!), fixed(t[t.length - 1]!)],
        ratio: fixed(median(r), 3),
        ratioRange: [q(r, 0), q(r, 1)],
      };
    };
    receiver.send('count');
    const { spans } = await next();
    return {
      label: `live traces (100 turns of 5 steps, memory store; ${PAIRS} alternating pairs)`,
      value: {
        untracedUsPerStep: fixed(median(pairs.map((p) => p[0].steps))),
        tracedUsPerStep: fixed(median(pairs.map((p) => p[1].steps))),
        ratio: fixed(median(steady), 3),
        ratioQuartiles: [q(steady, 0.25), q(steady, 0.75)],
        ratioRange: [q(steady, 0), q(steady, 1)],
        tracedUsPerStepWithFlush: fixed(median(pairs.map((p) => p[1].withFlush))),
        ratioWithFlush: fixed(median(flushed), 3),
        ratioWithFlushQuartiles: [q(flushed, 0.25), q(flushed, 0.75)],
        flushMs: fixed(median(pairs.map((p) => p[1].flushMs))),
        spansReceived: spans ?? 0,
        mainThreadCpuPerStep: cpuOf((r) => r.mainCpu),
        processCpuPerStep: cpuOf((r) => r.processCpu),
      },
    };
  } finally {
    await live.shutdown();
    receiver.kill();
  }
}

if (process.argv[1]?.endsWith('live-traces.js')) console.log(JSON.stringify((await bench()).value));
