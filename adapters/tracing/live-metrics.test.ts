/**
 * Live metrics inside one process (ADR 0058): the tracer's batches carry the
 * chat spans' values to a local OTLP/HTTP receiver; a request is counted once,
 * though its session is projected again at every batch and at its end.
 */
import { createServer, type Server } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../../test/helpers/harness.js';
import { LiveTraces } from './live.js';

interface Point { attributes: { key: string; value: { stringValue?: string } }[]; count: string | number; sum: number }
interface Body { resourceMetrics: { scopeMetrics: { metrics: { name: string; histogram: { dataPoints: Point[] } }[] }[] }[] }

let h: Harness | undefined;
let server: Server;
let bodies: Body[];
let url: string;
beforeEach(async () => {
  bodies = [];
  server = createServer((req, res) => {
    let b = '';
    req.on('data', (d) => (b += d));
    req.on('end', () => {
      if (req.url === '/v1/metrics') bodies.push(JSON.parse(b) as Body);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1/metrics`;
});
afterEach(async () => {
  await h?.cleanup();
  server.close();
});

const points = (b: Body, name: string) => b.resourceMetrics.flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics.filter((m) => m.name === name).flatMap((m) => m.histogram.dataPoints)));
const tokenSum = (b: Body, type: string) => points(b, 'gen_ai.client.token.usage').filter((p) => p.attributes.some((a) => a.key === 'gen_ai.token.type' && a.value.stringValue === type)).reduce((n, p) => n + p.sum, 0);
const count = (b: Body) => points(b, 'gen_ai.client.operation.duration').reduce((n, p) => n + Number(p.count), 0);

describe('live metrics', () => {
  it('each chat span is counted once across batches and the session’s end; with no traces endpoint only metrics are sent', async () => {
    const warned: string[] = [];
    const live = new LiveTraces(undefined, { version: '1', env: {}, warn: (l) => warned.push(l), metricsEndpoint: url });
    let n = 0;
    h = createHarness(async () => ({ text: `answer ${++n}`, usage: { inputTokens: 10 * n, outputTokens: n } }), { plugins: [live.plugin] });
    expect((await h.session.run('first')).reason).toBe('completed');
    await live.flush();
    expect(bodies).toHaveLength(1);
    expect(count(bodies[0]!)).toBe(1);

    expect((await h.session.run('second')).reason).toBe('completed');
    await live.flush();
    await h.session.close();
    await live.shutdown();
    // Cumulative: the last request holds both requests, once each (the session's end added no chat span).
    const last = bodies.at(-1)!;
    expect(bodies).toHaveLength(2);
    expect(count(last)).toBe(2);
    expect([tokenSum(last, 'input'), tokenSum(last, 'output')]).toEqual([30, 3]);
    // The time to each answer's first chunk, as its assistant/message logged it (ADR 0079), once each.
    const logged = h.entries().flatMap((e) => (e.kind === 'assistant/message' && e.firstChunkMs !== undefined ? [e.firstChunkMs] : []));
    expect(logged).toHaveLength(2);
    const first = points(last, 'gen_ai.client.operation.time_to_first_chunk');
    expect(first.reduce((n, p) => n + Number(p.count), 0)).toBe(2);
    expect(first.reduce((n, p) => n + p.sum, 0)).toBeCloseTo(logged.reduce((a, b) => a + b, 0) / 1000, 9);
    expect(warned).toEqual([]);
  });
});
