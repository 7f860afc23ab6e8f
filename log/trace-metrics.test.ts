import { readFileSync } from 'node:fs';
import * as semconv from '@opentelemetry/semantic-conventions/incubating';
import { describe, expect, it } from 'vitest';
import type { Entry } from './entries.js';
import { parseLog } from './parse.js';
import { verifyLog } from './verify.js';
import { chatMeasurements } from './trace-metrics.js';
import { OPERATION_DURATION, TIME_TO_FIRST_CHUNK, TOKEN_USAGE } from './trace-conventions.js';
import { traceOf } from './trace.js';

const golden = (name: string): Entry[] => parseLog(readFileSync(new URL(`../test/golden/${name}.jsonl`, import.meta.url), 'utf8')).entries;
/** The golden log with the usage a provider would report on each request, and its last request failed. */
function withUsage(): Entry[] {
  const entries = golden('flaky-checkout');
  const last = entries.findLastIndex((e) => e.kind === 'assistant/message');
  let n = 0;
  return entries.map((e, i) => {
    if (e.kind !== 'assistant/message') return e;
    n++;
    const usage = { inputTokens: 100 * n, outputTokens: n };
    return i === last ? { ...e, usage, finish: { kind: 'error', code: 'RATE_LIMIT', message: 'slow down' } } : { ...e, usage };
  }) as Entry[];
}
const usageOf = (entries: Entry[]) => entries.flatMap((e) => (e.kind === 'assistant/message' && e.usage ? [e.usage] : []));
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe('the GenAI client metrics are a projection of the chat spans', () => {
  it('the metric and attribute names are the official conventions package’s', () => {
    expect(OPERATION_DURATION).toBe(semconv.METRIC_GEN_AI_CLIENT_OPERATION_DURATION);
    expect(TOKEN_USAGE).toBe(semconv.METRIC_GEN_AI_CLIENT_TOKEN_USAGE);
    expect(TIME_TO_FIRST_CHUNK).toBe(semconv.METRIC_GEN_AI_CLIENT_OPERATION_TIME_TO_FIRST_CHUNK);
    const known = new Set(Object.entries(semconv).filter(([k]) => k.startsWith('ATTR_')).map(([, v]) => v as string));
    const m = chatMeasurements(traceOf(withUsage()));
    expect(m.tokens.length).toBeGreaterThan(0);
    for (const p of [...m.duration, ...m.tokens]) for (const k of Object.keys(p.attributes)) expect(known.has(k), k).toBe(true);
  });

  it('one duration per ended chat span, its span’s length in seconds; an input and an output value per request, summing to the log’s usage', () => {
    const entries = withUsage();
    const spans = traceOf(entries);
    const chats = spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'chat' && s.status.code !== 'unset');
    const m = chatMeasurements(spans);
    expect(m.duration.map((d) => d.value)).toEqual(chats.map((s) => Number(BigInt(s.endTimeUnixNano) - BigInt(s.startTimeUnixNano)) / 1e9));
    for (const d of m.duration) expect(d.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'bridle.scripted', 'gen_ai.request.model': expect.any(String) });
    const usage = usageOf(entries);
    expect(usage.length).toBeGreaterThan(0);
    const of = (type: string) => m.tokens.filter((t) => t.attributes['gen_ai.token.type'] === type).map((t) => t.value);
    expect(sum(of('input'))).toBe(sum(usage.map((u) => u.inputTokens)));
    expect(sum(of('output'))).toBe(sum(usage.map((u) => u.outputTokens)));
    expect(of('input')).toHaveLength(usage.length);
  });

  it('a chat that failed carries its error.type; a chat still open is not measured; the same spans give the same values', () => {
    for (const [name, entries] of [...['approvals', 'compaction', 'crash-resume', 'ctrl-c'].map((n) => [n, golden(n)] as const), ['with usage', withUsage()] as const]) {
      const spans = traceOf(entries);
      const m = chatMeasurements(spans);
      const chats = spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'chat');
      const ended = chats.filter((s) => s.status.code !== 'unset');
      expect(m.duration, name).toHaveLength(ended.length);
      expect(m.duration.map((d) => d.attributes['error.type'])).toEqual(ended.map((s) => s.attributes['error.type']));
      expect(chatMeasurements(spans)).toEqual(m);
    }
    const failed = chatMeasurements(traceOf(withUsage())).duration.at(-1)!;
    expect(failed.attributes['error.type']).toBe('RATE_LIMIT');
    // A log cut while a request was in flight: that chat has no end yet, so no value.
    const entries = withUsage();
    const cut = entries.slice(0, entries.findLastIndex((e) => e.kind === 'assistant/message'));
    expect(chatMeasurements(traceOf(cut)).duration).toHaveLength(usageOf(entries).length - 1);
  });
});

/** The golden log as a run of today writes it: each answer with the time to its first chunk (ADR 0079), read back through the parser. */
function withFirstChunk(): Entry[] {
  let n = 0;
  const text = withUsage()
    .map((e) => JSON.stringify(e.kind === 'assistant/message' ? { ...e, firstChunkMs: 150 * ++n } : e))
    .join('\n');
  return parseLog(text).entries;
}

describe('time to first chunk (ADR 0079)', () => {
  it('a log that holds firstChunkMs gives one gen_ai.client.operation.time_to_first_chunk value per answer, in seconds, with the duration’s attributes but no error.type', () => {
    const entries = withFirstChunk();
    expect(verifyLog(entries).violations).toEqual([]);
    const logged = entries.flatMap((e) => (e.kind === 'assistant/message' && e.firstChunkMs !== undefined ? [e.firstChunkMs] : []));
    expect(logged.length).toBeGreaterThan(1);
    const m = chatMeasurements(traceOf(entries));
    expect(m.firstChunk.map((f) => f.value)).toEqual(logged.map((ms) => ms / 1000));
    // The conventions list operation, provider and models for this metric; the failed last request's point has no error.type.
    const { 'error.type': _e, ...base } = m.duration.at(-1)!.attributes;
    expect(m.firstChunk.at(-1)!.attributes).toEqual(base);
    expect(m.duration.at(-1)!.attributes['error.type']).toBe('RATE_LIMIT');
  });

  it('a log from before it (every golden) has no time to first chunk, and no point', () => {
    for (const name of ['approvals', 'compaction', 'crash-resume', 'ctrl-c', 'flaky-checkout', 'schedule']) {
      const entries = golden(name);
      expect(verifyLog(entries).violations, name).toEqual([]);
      expect(entries.some((e) => e.kind === 'assistant/message' && e.firstChunkMs !== undefined), name).toBe(false);
      expect(chatMeasurements(traceOf(entries)).firstChunk, name).toEqual([]);
    }
  });
});
