/**
 * Live traces as a team would switch them on (ADR 0055): the standard
 * `OTEL_EXPORTER_OTLP_ENDPOINT` pointed at a collector (a local OTLP/HTTP
 * receiver here, fed by the official exporter), and `bridle run` sends the
 * spans of its session as it goes — the same spans `bridle trace --json`
 * gives for the same log afterwards. A `TRACEPARENT` parents them, and is
 * logged; a collector that is not there costs one warning, not the run.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readSessionLog, tempWorld, type CliWorld } from '../helpers/cli-world.js';
import { runCli } from '../helpers/cli.js';
import { startOtlpReceiver, twoStepScript, type OtlpPost, type OtlpReceiver } from '../helpers/otlp-receiver.js';
import { RpcClient } from '../helpers/rpc-client.js';
import { startServeProcess } from '../helpers/serve-process.js';

interface OtlpSpan { name: string; traceId: string; spanId: string; parentSpanId?: string; startTimeUnixNano: string; attributes: { key: string; value: unknown }[] }
interface OtlpRequest { resourceSpans: { resource: { attributes: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { spans: OtlpSpan[] }[] }[] }
const spansOf = (body: string): OtlpSpan[] => (JSON.parse(body) as OtlpRequest).resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
const byId = (spans: OtlpSpan[]) => [...spans].sort((a, b) => a.spanId.localeCompare(b.spanId));
let world: CliWorld;
let collector: OtlpReceiver;
let posts: OtlpPost[];
let port: number;
beforeEach(async () => {
  world = tempWorld('bridle-live-trace-');
  collector = await startOtlpReceiver();
  ({ posts, port } = collector);
});
afterEach(() => collector.close());

const script = () => twoStepScript(world.root, 'scripted: live traces');

const PARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe('live traces from bridle run', () => {
  it('with OTEL_EXPORTER_OTLP_ENDPOINT set, bridle run sends its spans as it goes, and they are the spans bridle trace gives for the log', async () => {
    const env = { BRIDLE_HOME: world.home, OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, TRACEPARENT: PARENT, OTEL_SERVICE_NAME: 'ci-agent' };
    const r = await runCli(['run', '--cwd', world.ws, '--model', script(), 'what is here?'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/warning/);
    // The same endpoint takes the metrics too (test/e2e/metrics-live.test.ts): the spans are what went to /v1/traces.
    const traces = posts.filter((p) => p.path === '/v1/traces');
    expect(traces.length).toBeGreaterThan(0);
    expect(traces.every((p) => p.type.includes('application/json'))).toBe(true);
    const live = traces.flatMap((p) => spansOf(p.body));
    // Each span went once, though the session was projected at its turn's end and again at its end.
    expect(new Set(live.map((s) => s.spanId)).size).toBe(live.length);
    expect(live.map((s) => s.name)).toEqual(expect.arrayContaining(['invoke_agent bridle', 'turn t1', 'execute_tool list_dir']));
    expect(live.filter((s) => s.name.startsWith('chat '))).toHaveLength(2);

    // The given trace context parents the session, and the log keeps it.
    const root = live.find((s) => s.name === 'invoke_agent bridle')!;
    expect(root.traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(root.parentSpanId).toBe('b7ad6b7169203331');
    expect(live.every((s) => s.traceId === root.traceId)).toBe(true);
    const log = readSessionLog(world.home);
    expect(log[0]).toMatchObject({ kind: 'session/start', traceparent: PARENT });
    const resource = (JSON.parse(traces[0]!.body) as OtlpRequest).resourceSpans[0]!.resource.attributes;
    expect(resource.find((a) => a.key === 'service.name')?.value.stringValue).toBe('ci-agent');

    // The same log exported afterwards: the same spans.
    const id = (log[0] as { id: string }).id;
    const after = await runCli(['trace', id, '--json'], { env: { BRIDLE_HOME: world.home, OTEL_SERVICE_NAME: 'ci-agent' } });
    expect(after.code, after.stderr).toBe(0);
    expect(byId(live)).toEqual(byId(spansOf(after.stdout)));
  }, 60_000);

  it('a collector that is not there is one warning; the run completes and its log is whole', async () => {
    collector.close();
    const env = { BRIDLE_HOME: world.home, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_EXPORTER_OTLP_TIMEOUT: '1000' };
    const r = await runCli(['run', '--cwd', world.ws, '--model', script(), 'what is here?'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Nothing here.');
    const warnings = r.stderr.split('\n').filter((l) => l.includes('warning'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/traces not (taken by the collector|exported) .*http:\/\/127\.0\.0\.1:9\/v1\/traces/);
    expect(readSessionLog(world.home).filter((e) => e.kind === 'turn/end')).toMatchObject([{ reason: 'completed', steps: 2 }]);
  }, 60_000);

  it('without the variables nothing is sent, and a TRACEPARENT that is not one is a warning and left out of the log', async () => {
    const r = await runCli(['run', '--cwd', world.ws, '--model', script(), 'what is here?'], { env: { BRIDLE_HOME: world.home, TRACEPARENT: 'not-a-traceparent' } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/TRACEPARENT is not a W3C traceparent/);
    expect(posts).toHaveLength(0);
    expect(readSessionLog(world.home)[0]).not.toHaveProperty('traceparent');
  }, 60_000);

  it('bridle serve: a session/create traceparent parents that session’s spans, which reach the collector once the turn ends', async () => {
    const token = 'live-trace-token';
    const serve = await startServeProcess(['--cwd', world.ws, '--model', script(), '--approval', 'auto', '--sandbox', 'off'], {
      BRIDLE_HOME: world.home,
      BRIDLE_TOKEN: token,
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      // A batch every 100 ms instead of the standard 5 s, so the test need not wait.
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    const c = await RpcClient.connect(serve.url, { token });
    try {
      const other = '00-11111111111111111111111111111111-2222222222222222-01';
      const { sessionId } = await c.call('session/create', { traceparent: other });
      await c.call('session/attach', { sessionId });
      await c.call('session/input', { sessionId, text: 'what is here?' });
      await c.waitFor((m) => m.method === 'session/entry' && m.params.entry.kind === 'turn/end', 20_000, 'the turn');
      for (let t = Date.now(); !posts.some((p) => p.body.includes('turn t1')) && Date.now() - t < 10_000; ) await new Promise((r) => setTimeout(r, 50));
      const spans = posts.filter((p) => p.path === '/v1/traces').flatMap((p) => spansOf(p.body));
      const turn = spans.find((s) => s.name === 'turn t1')!;
      expect(turn.traceId).toBe('11111111111111111111111111111111');
      // A traceparent that is not one is refused as bad params, nothing opened.
      await expect(c.call('session/create', { traceparent: 'zz' })).rejects.toThrow();
    } finally {
      c.close();
      await serve.stop();
    }
  }, 60_000);
});
