/**
 * What live traces cost a session (ADR 0055): the same turns — 5 steps each,
 * a no-op call per step, a memory store — untraced, and traced to a local
 * OTLP/HTTP receiver through the official exporter, as `run` and the others
 * do it: entries handed over at each turn's end to the worker thread that
 * projects, encodes and posts them (ADR 0080). Time per step, the flush
 * included. `BRIDLE_BENCH_PAIRS` sets the number of alternating pairs (9).
 */
import { createServer } from 'node:http';
import { LiveTraces } from '../adapters/tracing/live.js';
import { benchSession } from './session.js';
import { median } from './stats.js';

const TURNS = 100;
const STEPS = 5;
const PAIRS = Number(process.env.BRIDLE_BENCH_PAIRS) || 9;

async function runTurns(live: LiveTraces | undefined): Promise<number> {
  const session = benchSession({
    id: 'bench-live',
    respond: (_req, i) => (i % STEPS === STEPS - 1 ? { text: 'done' } : { toolCalls: [{ name: 'noop', arguments: { n: i } }] }),
    maxSteps: STEPS + 1,
    ...(live ? { plugins: [live.plugin] } : {}),
  });
  const start = process.hrtime.bigint();
  for (let t = 0; t < TURNS; t++) {
    const out = await session.run(`turn ${t}`);
    if (out.reason !== 'completed') throw new Error(`bench turn ended ${out.reason}`);
  }
  await session.close();
  await live?.flush();
  return Number(process.hrtime.bigint() - start) / 1000 / (TURNS * STEPS);
}

export async function bench(): Promise<{ label: string; value: Record<string, unknown> }> {
  let spans = 0;
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      spans += (body.match(/"spanId"/g) ?? []).length;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/v1/traces`;
  // One LiveTraces for the process, as `run` and the others have: its worker thread starts (and loads the
  // OpenTelemetry packages) once, in the warm-up, and each traced run's flush is counted.
  const live = new LiveTraces(url, { version: 'bench', env: {}, worker: true, warn: (l) => process.stderr.write(`bench: ${l}\n`) });
  const traced = () => runTurns(live);
  try {
    // Both paths warm (the first traced run also loads the OpenTelemetry packages), then untraced and traced runs
    // alternate, so a drift of the machine's load weighs on both alike; the ratio is the median of each pair's.
    for (let i = 0; i < 2; i++) await runTurns(undefined);
    await traced();
    const pairs: Array<[number, number]> = [];
    for (let i = 0; i < PAIRS; i++) pairs.push([await runTurns(undefined), await traced()]);
    const untracedUs = median(pairs.map((p) => p[0]));
    const tracedUs = median(pairs.map((p) => p[1]));
    const ratios = pairs.map(([u, t]) => t / u).sort((a, b) => a - b);
    const ratio = median(ratios);
    const q = (f: number) => Number(ratios[Math.min(ratios.length - 1, Math.floor(f * ratios.length))]!.toFixed(3));
    return {
      label: `live traces (100 turns of 5 steps, memory store; ${PAIRS} alternating pairs)`,
      value: { untracedUsPerStep: Number(untracedUs.toFixed(1)), tracedUsPerStep: Number(tracedUs.toFixed(1)), ratio: Number(ratio.toFixed(3)), ratioQuartiles: [q(0.25), q(0.75)], ratioRange: [q(0), q(1)], spansReceived: spans },
    };
  } finally {
    await live.shutdown();
    receiver.close();
  }
}

if (process.argv[1]?.endsWith('live-traces.js')) console.log(JSON.stringify((await bench()).value));
