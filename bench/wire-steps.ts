/**
 * Per-step cost of each model provider, next to Chat Completions': the bench's no-op tool turn, every
 * request going through the provider's wire mapper and real SDK to a local fake server of its wire
 * (test/helpers/wire-server.ts, loopback HTTP) and every answer back through its SSE parser and stream
 * mapper. The scripted model without a wire is the floor. Medians of microseconds per step; nothing here
 * is a live endpoint.
 *
 *   npm run build && node dist/bench/wire-steps.js      (also a row of `npm run bench`)
 */
import { pathToFileURL } from 'node:url';
import type { ModelProvider } from '../ports/model.js';
import { WIRES, type Wire } from '../test/helpers/wire-fake.js';
import { serveWireModel, type ServedWireModel } from '../test/helpers/wire-server.js';
import { benchSession } from './session.js';
import { median } from './stats.js';

const STEPS = 200;
const RUNS = 5;

async function perStep(wire: Wire | 'scripted'): Promise<number> {
  // One server per wire; each run's scripted model is put behind it.
  let inner: ModelProvider | undefined;
  const served: ServedWireModel | undefined = wire === 'scripted' ? undefined : await serveWireModel(wire, { id: 'bench', stream: (r, signal) => inner!.stream(r, signal) });
  const times: number[] = [];
  try {
    // The first run warms the SDK's and the mapper's code paths; it is not counted.
    for (let run = 0; run <= RUNS; run++) {
      const session = benchSession({
        id: 'bench-wire',
        respond: (_r, i) => (i < STEPS - 1 ? { toolCalls: [{ name: 'noop', arguments: { n: i } }], usage: { inputTokens: 100 + i, outputTokens: 5 } } : { text: 'done' }),
        maxSteps: STEPS + 1,
        wrap: (m) => (served ? ((inner = m), served.model) : m),
      });
      const start = process.hrtime.bigint();
      const out = await session.run('go');
      const ns = Number(process.hrtime.bigint() - start);
      await session.close();
      if (out.steps !== STEPS || out.reason !== 'completed') throw new Error(`${wire}: the bench turn ended ${out.reason} after ${out.steps} steps`);
      if (run > 0) times.push(ns / 1000 / STEPS);
    }
  } finally {
    await served?.close();
  }
  return median(times);
}

export async function bench(): Promise<{ label: string; value: Record<string, unknown> }> {
  const value: Record<string, number> = {};
  for (const wire of ['scripted', ...WIRES] as const) value[wire] = Number((await perStep(wire)).toFixed(1));
  const chat = value['openai-chat']!;
  const ratios = Object.fromEntries(WIRES.map((w) => [w, Number((value[w]! / chat).toFixed(2))]));
  return { label: `per-step cost through each provider's SDK and a local fake server (${STEPS} steps, median of ${RUNS} runs, µs/step)`, value: { ...value, vsChatCompletions: ratios } };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const r = await bench();
  process.stdout.write(`${r.label}\n${JSON.stringify(r.value, null, 2)}\n`);
}
