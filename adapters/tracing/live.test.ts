/**
 * Live traces inside one process (ADR 0055): a session and its in-process
 * children, each mounting the same `LiveTraces`; spans go out as turns end,
 * each once, and together they are `traceOf` of the finished tree — the trace
 * `bridle trace` exports of the same logs.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createMemorySessionStore } from '../store/memory.js';
import type { ScriptedResponse } from '../model/scripted-script.js';
import type { Entry } from '../../log/entries.js';
import type { ModelRequest } from '../../log/messages.js';
import { childTraceparent, parseTraceparent, traceOf, type TraceSpan } from '../../log/trace.js';
import { createHarness, type Harness } from '../../test/helpers/harness.js';
import { LiveTraces, tracesEndpoint } from './live.js';
import type { SpanExporter } from './otlp.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

function collecting(): { exporter: SpanExporter; batches: TraceSpan[][]; fail?: boolean } {
  const out: { exporter: SpanExporter; batches: TraceSpan[][]; fail?: boolean } = {
    batches: [],
    exporter: {
      send: async (spans) => {
        if (out.fail) return 'connect ECONNREFUSED 127.0.0.1:4318';
        out.batches.push(structuredClone([...spans]));
        return undefined;
      },
      shutdown: async () => undefined,
    },
  };
  return out;
}

const whoOf = (req: ModelRequest) => {
  const first = req.messages.find((m) => m.role === 'user');
  return first && first.role === 'user' ? first.content : '';
};

describe('live traces', () => {
  it('the standard variables decide whether and where: the traces endpoint, else the base one plus /v1/traces; disabled or another exporter: none', () => {
    expect(tracesEndpoint({})).toBeUndefined();
    expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' })).toBe('http://c:4318/v1/traces');
    expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t/x' })).toBe('http://t/x');
    expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
    expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' })).toBeUndefined();
    expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'console,otlp' })).toBe('http://c:4318/v1/traces');
  });

  it('spans go out as turns end, each once, children with their root; together they are the trace of the finished tree', async () => {
    const sink = collecting();
    const warned: string[] = [];
    const live = new LiveTraces('http://collector/v1/traces', { version: '9.9.9', env: {}, warn: (l) => warned.push(l), exporter: sink.exporter });
    const store = createMemorySessionStore();
    const counts = new Map<string, number>();
    h = createHarness(
      async (req): Promise<ScriptedResponse> => {
        const who = whoOf(req);
        const n = counts.get(who) ?? 0;
        counts.set(who, n + 1);
        if (who === 'count the files') return n === 0 ? { toolCalls: [{ name: 'list_dir', arguments: {} }] } : { text: 'none' };
        if (who === 'first') return n === 0 ? { toolCalls: [{ name: 'delegate', arguments: { task: 'count the files' } }] } : { text: 'done' };
        return { text: `answer ${n}` };
      },
      { services: { store }, plugins: [live.plugin], settings: { maxDepth: 3 } },
    );
    expect((await h.session.run('first')).reason).toBe('completed');
    await live.flush();
    const afterFirst = sink.batches.flat();
    expect(afterFirst.map((s) => s.name)).toEqual(expect.arrayContaining(['turn t1', 'execute_tool delegate', 'execute_tool list_dir']));
    // The root is still running: its span is not sent until it ends.
    expect(afterFirst.some((s) => s.name === 'invoke_agent bridle' && !s.parentSpanId)).toBe(false);

    expect((await h.session.run('second')).reason).toBe('completed');
    await h.session.close();
    await live.flush();
    const all = sink.batches.flat();
    expect(new Set(all.map((s) => s.spanId)).size).toBe(all.length);

    // The finished tree, projected after the fact: the same spans.
    const logOf = (id: string): Entry[] => (store.get(id)?.text() ?? '').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Entry);
    const root = h.entries();
    const after = traceOf(root, { children: (id) => logOf(id) });
    const key = (s: TraceSpan[]) => [...s].sort((a, b) => a.spanId.localeCompare(b.spanId));
    expect(key(all)).toEqual(key(after));
    expect(warned).toEqual([]);

    // The child logged the context it was started under: the parent's delegate call.
    const child = logOf('test-session.t1.s1.c1');
    const logged = child[0]!.kind === 'session/start' ? child[0]!.traceparent : undefined;
    expect(logged).toBe(childTraceparent(root, 't1.s1.c1'));
    const call = after.find((s) => s.name === 'execute_tool delegate')!;
    expect(parseTraceparent(logged!)).toEqual({ traceId: call.traceId, spanId: call.spanId });
  });

  it('an exporter that fails is one warning; the session goes on', async () => {
    const sink = collecting();
    sink.fail = true;
    const warned: string[] = [];
    const live = new LiveTraces('http://user:secret@collector/v1/traces', { version: '1', env: {}, warn: (l) => warned.push(l), exporter: sink.exporter });
    h = createHarness(async () => ({ text: 'ok' }), { plugins: [live.plugin] });
    for (const t of ['a', 'b', 'c']) expect((await h.session.run(t)).reason).toBe('completed');
    await h.session.close();
    await live.flush();
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatch(/traces not taken by the collector at .*collector\/v1\/traces: connect ECONNREFUSED/);
    expect(warned[0]).not.toContain('secret');
  });
});
