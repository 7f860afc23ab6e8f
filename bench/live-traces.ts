/**
 * What live traces cost a session (ADR 0055): the same turns — 5 steps each,
 * a no-op call per step, a memory store — untraced, and traced to a local
 * OTLP/HTTP receiver through the official exporter (the projection at each
 * turn's end, the encoding, the POST). Time per step, the flush included.
 */
import { createServer } from 'node:http';
import { LiveTraces } from '../adapters/tracing/live.js';
import { benchSession } from './session.js';
import { median, repeat } from './stats.js';

const TURNS = 100;
const STEPS = 5;

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
  try {
    for (let i = 0; i < 2; i++) await runTurns(undefined);
    const untraced = median(await repeat(5, () => runTurns(undefined)));
    const traced = median(
      await repeat(5, async () => {
        const live = new LiveTraces(url, { version: 'bench', env: {}, warn: (l) => process.stderr.write(`bench: ${l}\n`) });
        const us = await runTurns(live);
        await live.shutdown();
        return us;
      }),
    );
    return { label: 'live traces (100 turns of 5 steps, memory store)', value: { untracedUsPerStep: Number(untraced.toFixed(1)), tracedUsPerStep: Number(traced.toFixed(1)), ratio: Number((traced / untraced).toFixed(3)), spansReceived: spans } };
  } finally {
    receiver.close();
  }
}
