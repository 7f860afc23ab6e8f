/**
 * Live metrics as a team would switch them on (ADR 0058): the standard
 * variables name a collector (a local OTLP/HTTP receiver here) and `bridle run`
 * sends the GenAI conventions' client histograms, computed from the chat spans
 * of its log: one duration value per model request, and an input and an output
 * token value each, whose sums are the usage the log holds; and the time to each
 * answer's first chunk, as its `assistant/message` logged it (ADR 0079).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readSessionLog, tempWorld, type CliWorld } from '../helpers/cli-world.js';
import { runCli } from '../helpers/cli.js';
import { startOtlpReceiver, twoStepScript, type OtlpPost, type OtlpReceiver } from '../helpers/otlp-receiver.js';

interface OtlpAttr { key: string; value: { stringValue?: string } }
interface OtlpPoint { attributes: OtlpAttr[]; count: string | number; sum: number; explicitBounds: number[]; bucketCounts: (string | number)[] }
interface OtlpMetric { name: string; unit: string; histogram?: { dataPoints: OtlpPoint[]; aggregationTemporality: number } }
interface OtlpMetrics { resourceMetrics: { resource: { attributes: OtlpAttr[] }; scopeMetrics: { scope: { name: string }; metrics: OtlpMetric[] }[] }[] }
const metricsOf = (body: string): OtlpMetric[] => (JSON.parse(body) as OtlpMetrics).resourceMetrics.flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics));
const attr = (p: OtlpPoint, key: string) => p.attributes.find((a) => a.key === key)?.value.stringValue;
let world: CliWorld;
let collector: OtlpReceiver;
let posts: OtlpPost[];
let port: number;
beforeEach(async () => {
  world = tempWorld('bridle-live-metrics-');
  collector = await startOtlpReceiver();
  ({ posts, port } = collector);
});
afterEach(() => collector.close());

const script = () => twoStepScript(world.root, 'scripted: live metrics');

const run = (env: NodeJS.ProcessEnv) => runCli(['run', '--cwd', world.ws, '--model', script(), 'what is here?'], { env: { BRIDLE_HOME: world.home, ...env } });

/** The last request's histograms: cumulative by default, so it holds every value the run recorded. */
function lastMetrics(): OtlpMetric[] {
  const sent = posts.filter((p) => p.path === '/v1/metrics');
  expect(sent.length).toBeGreaterThan(0);
  expect(sent.every((p) => p.type.includes('application/json'))).toBe(true);
  return metricsOf(sent.at(-1)!.body);
}

describe('live metrics from bridle run', () => {
  it('gen_ai.client.operation.duration and gen_ai.client.token.usage arrive at /v1/metrics with the conventions’ units, one value per chat span, token sums equal to the log’s usage', async () => {
    const r = await run({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_SERVICE_NAME: 'ci-agent' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/warning/);
    const metrics = lastMetrics();
    const duration = metrics.find((m) => m.name === 'gen_ai.client.operation.duration')!;
    const tokens = metrics.find((m) => m.name === 'gen_ai.client.token.usage')!;
    expect(duration.unit).toBe('s');
    expect(tokens.unit).toBe('{token}');

    const log = readSessionLog(world.home);
    const results = log.filter((e) => e.kind === 'assistant/message') as unknown as { usage?: { inputTokens: number; outputTokens: number } }[];
    expect(results).toHaveLength(2);
    const inputSum = results.reduce((n, e) => n + (e.usage?.inputTokens ?? 0), 0);
    const outputSum = results.reduce((n, e) => n + (e.usage?.outputTokens ?? 0), 0);
    expect([inputSum, outputSum]).toEqual([230, 15]);

    // Both requests went to the same model: one series per metric (and token type), two values each.
    const [d] = duration.histogram!.dataPoints;
    expect(duration.histogram!.dataPoints).toHaveLength(1);
    expect(Number(d!.count)).toBe(2);
    expect(d!.sum).toBeGreaterThanOrEqual(0);
    expect(attr(d!, 'gen_ai.operation.name')).toBe('chat');
    expect(attr(d!, 'gen_ai.provider.name')).toBe('bridle.scripted');
    expect(attr(d!, 'gen_ai.request.model')).toMatch(/^scripted/);
    expect(attr(d!, 'error.type')).toBeUndefined();
    expect(d!.explicitBounds[0]).toBe(0.01);

    const byType = Object.fromEntries(tokens.histogram!.dataPoints.map((p) => [attr(p, 'gen_ai.token.type'), p]));
    expect(Object.keys(byType).sort()).toEqual(['input', 'output']);
    expect([Number(byType.input!.count), byType.input!.sum]).toEqual([2, inputSum]);
    expect([Number(byType.output!.count), byType.output!.sum]).toEqual([2, outputSum]);
    expect(attr(byType.input!, 'gen_ai.request.model')).toBe(attr(d!, 'gen_ai.request.model'));

    // Time to first chunk (ADR 0079): one value per answer, each the firstChunkMs its assistant/message logged, in seconds.
    const first = metrics.find((m) => m.name === 'gen_ai.client.operation.time_to_first_chunk')!;
    expect(first.unit).toBe('s');
    const logged = (log.filter((e) => e.kind === 'assistant/message') as unknown as { firstChunkMs?: number }[]).map((e) => e.firstChunkMs);
    expect(logged.every((ms) => Number.isInteger(ms) && ms! >= 0)).toBe(true);
    const [f] = first.histogram!.dataPoints;
    expect(first.histogram!.dataPoints).toHaveLength(1);
    expect(Number(f!.count)).toBe(2);
    expect(f!.sum).toBeCloseTo(logged.reduce((a, b) => a! + b!, 0)! / 1000, 9);
    expect(f!.explicitBounds).toEqual(d!.explicitBounds);
    expect(f!.attributes.map((a) => a.key).sort()).toEqual(d!.attributes.map((a) => a.key).sort());

    const resource = (JSON.parse(posts.filter((p) => p.path === '/v1/metrics').at(-1)!.body) as OtlpMetrics).resourceMetrics[0]!.resource.attributes;
    expect(resource.find((a) => a.key === 'service.name')?.value.stringValue).toBe('ci-agent');
  }, 60_000);

  it('a metrics endpoint alone sends metrics and no spans; OTEL_METRICS_EXPORTER=none sends spans and no metrics', async () => {
    const alone = await run({ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `http://127.0.0.1:${port}/v1/metrics` });
    expect(alone.code, alone.stderr).toBe(0);
    expect(posts.length).toBeGreaterThan(0);
    expect(posts.every((p) => p.path === '/v1/metrics')).toBe(true);
    expect(lastMetrics().map((m) => m.name).sort()).toEqual(['gen_ai.client.operation.duration', 'gen_ai.client.operation.time_to_first_chunk', 'gen_ai.client.token.usage']);

    posts.length = 0;
    const none = await run({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_METRICS_EXPORTER: 'none' });
    expect(none.code, none.stderr).toBe(0);
    expect(posts.length).toBeGreaterThan(0);
    expect(posts.every((p) => p.path === '/v1/traces')).toBe(true);
  }, 60_000);

  it('without the variables, or with OTEL_SDK_DISABLED, no metrics are sent', async () => {
    const plain = await run({});
    expect(plain.code, plain.stderr).toBe(0);
    const disabled = await run({ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `http://127.0.0.1:${port}/v1/metrics`, OTEL_SDK_DISABLED: 'true' });
    expect(disabled.code, disabled.stderr).toBe(0);
    expect(posts).toHaveLength(0);
  }, 60_000);

  it('an unreachable metrics collector is one warning for the process, shared with the traces’; the run completes', async () => {
    collector.close();
    const both = await run({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_EXPORTER_OTLP_TIMEOUT: '1000' });
    expect(both.code, both.stderr).toBe(0);
    expect(both.stderr.split('\n').filter((l) => l.includes('warning'))).toHaveLength(1);

    const alone = await run({ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://127.0.0.1:9/v1/metrics', OTEL_EXPORTER_OTLP_TIMEOUT: '1000' });
    expect(alone.code, alone.stderr).toBe(0);
    expect(alone.stdout).toContain('Nothing here.');
    const warnings = alone.stderr.split('\n').filter((l) => l.includes('warning'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/metrics not (taken by the collector|exported) .*http:\/\/127\.0\.0\.1:9\/v1\/metrics/);
  }, 60_000);
});
