/**
 * `bridle trace` as a user runs it: a stored log as OTLP/JSON, identical on
 * every export; the same spans sent to an OTLP/HTTP collector (a local
 * receiver here, fed by the official exporter); content only on opt-in; an
 * unreachable collector is one line, exit 1.
 */
import { createServer, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const log = fileURLToPath(new URL('../golden/flaky-checkout.jsonl', import.meta.url));
const env = (extra: NodeJS.ProcessEnv = {}) => ({ BRIDLE_HOME: tempDir('bridle-trace-'), ...extra });

interface OtlpSpan { name: string; traceId: string; spanId: string; parentSpanId?: string; attributes: { key: string }[] }
const spansOf = (body: string): OtlpSpan[] => (JSON.parse(body) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] }).resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
const body = (req: IncomingMessage) => new Promise<string>((resolve) => {
  let b = '';
  req.on('data', (d) => (b += d));
  req.on('end', () => resolve(b));
});

describe('bridle trace', () => {
  it('exports a stored log as OTLP/JSON, byte for byte the same every time, with the GenAI span names', async () => {
    const a = await runCli(['trace', log, '--json'], { env: env() });
    const b = await runCli(['trace', log, '--json'], { env: env() });
    expect(a.code, a.stderr).toBe(0);
    expect(a.stdout).toBe(b.stdout);
    const spans = spansOf(a.stdout);
    expect(spans[0]!.name).toBe('invoke_agent bridle');
    expect(spans.some((s) => s.name.startsWith('chat '))).toBe(true);
    expect(spans.some((s) => s.name === 'execute_tool bash')).toBe(true);
    expect(a.stdout).toContain('"service.name"');
    expect(a.stdout).not.toContain('gen_ai.input.messages');
  });

  it('content only with the conventions’ opt-in variable', async () => {
    const r = await runCli(['trace', log, '--json'], { env: env({ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' }) });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('gen_ai.input.messages');
    expect(r.stdout).toContain('gen_ai.tool.call.arguments');
  });

  it('--otlp sends the same spans to a collector over OTLP/HTTP', async () => {
    const got: { path: string; type: string; body: string }[] = [];
    const server = createServer(async (req, res) => {
      got.push({ path: req.url ?? '', type: String(req.headers['content-type']), body: await body(req) });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    try {
      const r = await runCli(['trace', log, '--otlp', `http://127.0.0.1:${port}/v1/traces`], { env: env() });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/trace: \d+ spans sent to/);
      const posted = got.find((g) => g.path === '/v1/traces')!;
      expect(posted.type).toContain('application/json');
      const local = await runCli(['trace', log, '--json'], { env: env() });
      expect(spansOf(posted.body)).toEqual(spansOf(local.stdout));
    } finally {
      server.close();
    }
  });

  it('an unreachable collector is one line naming it, exit 1', async () => {
    const r = await runCli(['trace', log, '--otlp', 'http://127.0.0.1:9/v1/traces'], { env: env({ OTEL_EXPORTER_OTLP_TIMEOUT: '1000' }) });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/the collector at http:\/\/127\.0\.0\.1:9\/v1\/traces did not take the spans/);
  });

  it('without a flag, a tree of spans with durations and tokens', async () => {
    const r = await runCli(['trace', log], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/^invoke_agent bridle \d+ ms$/);
    expect(r.stdout).toMatch(/^ {4}execute_tool bash \d+ ms$/m);
  });
});
