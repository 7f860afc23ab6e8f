/**
 * The batcher live traces run (ADR 0080): hand-overs of a golden log turn by turn give, across batches, each
 * span once and together `traceOf` of the log; `OTEL_BSP_MAX_EXPORT_BATCH_SIZE` spans waiting go at once; what
 * ended before this process took a session is not sent again.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Entry } from '../../log/entries.js';
import { parseLog } from '../../log/parse.js';
import { traceOf, type TraceSpan } from '../../log/trace.js';
import { handoverOfText, TraceBatcher } from './live-batch.js';
import type { SpanExporter } from './otlp.js';

const golden = (name: string): Entry[] => parseLog(readFileSync(new URL(`../../test/golden/${name}.jsonl`, import.meta.url), 'utf8')).entries;
const byId = (spans: readonly TraceSpan[]) => JSON.stringify([...spans].sort((a, b) => a.spanId.localeCompare(b.spanId)));

function collecting(): { exporter: SpanExporter; batches: TraceSpan[][] } {
  const batches: TraceSpan[][] = [];
  return { batches, exporter: { send: async (spans) => void batches.push(structuredClone([...spans])), shutdown: async () => undefined } };
}

/** The log cut after each turn's end, as `LiveTraces` hands it over. */
function turns(entries: Entry[]): Entry[][] {
  const out: Entry[][] = [];
  let from = 0;
  entries.forEach((e, i) => {
    if (e.kind === 'turn/end' || i === entries.length - 1) {
      out.push(entries.slice(from, i + 1));
      from = i + 1;
    }
  });
  return out;
}

describe('TraceBatcher', () => {
  it('turn by turn, with at most 2 spans a batch: each span once, sent before the flush, together traceOf of the log', async () => {
    for (const name of ['flaky-checkout', 'compaction', 'approvals']) {
      const sink = collecting();
      const b = new TraceBatcher('http://c/v1/traces', { version: '1', env: { OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '2' }, warn: () => undefined, exporter: sink.exporter });
      const entries = golden(name);
      const id = entries[0]!.kind === 'session/start' ? entries[0]!.id : '';
      const parts = turns(entries);
      parts.forEach((part, i) => b.take({ id, root: id, entries: part, ...(i === parts.length - 1 ? { done: true } : {}) }));
      await new Promise((r) => setTimeout(r, 0));
      expect(sink.batches.length, name).toBeGreaterThan(0);
      await b.flush();
      expect(sink.batches.every((s) => s.length <= 2), name).toBe(true);
      expect(byId(sink.batches.flat()), name).toBe(byId(traceOf(entries)));
    }
  });

  it('a session this process goes on with: what ended in the entries before it took it is not sent', async () => {
    const sink = collecting();
    const b = new TraceBatcher('http://c/v1/traces', { version: '1', env: {}, warn: () => undefined, exporter: sink.exporter });
    const entries = golden('flaky-checkout');
    const id = entries[0]!.kind === 'session/start' ? entries[0]!.id : '';
    const cut = entries.findIndex((e) => e.kind === 'tool/result') + 1;
    b.take({ id, root: id, entries, before: cut, done: true });
    await b.flush();
    const before = new Set(traceOf(entries.slice(0, cut)).filter((s) => s.status.code !== 'unset').map((s) => s.spanId));
    const sent = sink.batches.flat();
    expect(before.size).toBeGreaterThan(0);
    expect(sent.some((s) => before.has(s.spanId))).toBe(false);
    expect(sent.map((s) => s.spanId).sort()).toEqual(traceOf(entries).filter((s) => !before.has(s.spanId)).map((s) => s.spanId).sort());
  });

  it("hand-overs as the worker gets them, the log's lines joined (ADR 0098): the same spans as the entries give", async () => {
    for (const name of ['flaky-checkout', 'compaction', 'approvals']) {
      const sink = collecting();
      const b = new TraceBatcher('http://c/v1/traces', { version: '1', env: {}, warn: () => undefined, exporter: sink.exporter });
      const lines = readFileSync(new URL(`../../test/golden/${name}.jsonl`, import.meta.url), 'utf8').split('\n').filter(Boolean);
      const entries = golden(name);
      const id = entries[0]!.kind === 'session/start' ? entries[0]!.id : '';
      let from = 0;
      for (const part of [...turns(entries), []]) {
        const h = handoverOfText({ id, root: id, lines: lines.slice(from, from + part.length).join('\n'), ...(part.length === 0 ? { done: true } : {}) });
        expect(h.entries, name).toEqual(part);
        b.take(h);
        from += part.length;
      }
      await b.flush();
      expect(byId(sink.batches.flat()), name).toBe(byId(traceOf(entries)));
    }
  });
});
