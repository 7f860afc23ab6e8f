/**
 * The exporting half of live traces (ADR 0055, ADR 0080): it takes a process's sessions' entries as they are
 * handed over, projects each once (`TraceProjector`, `traceOf` an entry at a time), queues the spans that end,
 * and hands the queue to the official OTLP/HTTP exporter as the batch span processor's standard variables say:
 * `OTEL_BSP_SCHEDULE_DELAY` after the first span queued (5 s by default), or at once when
 * `OTEL_BSP_MAX_EXPORT_BATCH_SIZE` spans are waiting (512, and at most that many an export), and at the flush. It runs where `LiveTraces` puts it:
 * in a worker thread (`live-worker.ts`), or on the caller's thread when a test gives its own exporter.
 */
import type { Entry } from '../../log/entries.js';
import { TraceProjector, type TraceSpan } from '../../log/trace.js';
import { redactUrl } from '../../safety/redact.js';
import { metricSinkOf, type MetricSink } from './metrics.js';
import { contentOptedIn, exporterOf, traceResource, type SpanExporter, type TraceResource } from './otlp.js';

/** A session's entries since its last hand-over, and the tree it is in (the session at its top, in this process). */
export interface Handover {
  id: string;
  root: string;
  entries: Entry[];
  /** On a session's first hand-over: how many of the entries are from before this process took it (their spans were someone else's to send). */
  before?: number;
  /** The session is done in this process (it ended, or was closed): a root's spans not yet ended go now. */
  done?: boolean;
}

/**
 * A hand-over as it crosses to the worker thread (ADR 0098): the entries as their log lines, joined by `\n` (a
 * line holds none), so the sessions' thread posts one string instead of cloning each entry's objects.
 */
export type HandoverText = Omit<Handover, 'entries'> & { lines: string };

/** Contract: the hand-over whose entries are the lines parsed; `lines` is what `LiveTraces` joined. */
export function handoverOfText(t: HandoverText): Handover {
  const { lines, ...rest } = t;
  return { ...rest, entries: lines === '' ? [] : lines.split('\n').map((l) => JSON.parse(l) as Entry) };
}

export interface TraceBatchOptions {
  version: string;
  env: NodeJS.ProcessEnv;
  /** One line, said once: the exporter failed. */
  warn: (line: string) => void;
  exporter?: SpanExporter;
  metricsEndpoint?: string;
}

const intOf = (text: string | undefined, fallback: number, min: number) => {
  const n = Number(text);
  return text !== undefined && text.trim() !== '' && Number.isInteger(n) && n >= min ? n : fallback;
};

export class TraceBatcher {
  private readonly roots = new Map<string, TraceProjector>();
  /** Every session being projected, by id: its projector and its tree's root. */
  private readonly known = new Map<string, { p: TraceProjector; root: string }>();
  /** A subagent's hand-overs that came before its parent's `subagent/start` made its projector. */
  private readonly waiting = new Map<string, Handover[]>();
  private readonly queue: TraceSpan[] = [];
  private chain: Promise<void> = Promise.resolve();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private warned = false;
  private readonly resource: TraceResource;
  private readonly content: boolean;
  private readonly delayMs: number;
  private readonly maxBatch: number;
  private exporter: Promise<SpanExporter> | undefined;
  private metrics: Promise<MetricSink> | undefined;

  constructor(
    private readonly endpoint: string | undefined,
    private readonly o: TraceBatchOptions,
  ) {
    this.resource = traceResource(o.version, o.env);
    this.content = contentOptedIn(o.env);
    this.delayMs = intOf(o.env.OTEL_BSP_SCHEDULE_DELAY, 5000, 0);
    this.maxBatch = intOf(o.env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE, 512, 1);
  }

  /** Contract: never throws. */
  take(h: Handover): void {
    try {
      this.project(h);
    } catch (err) {
      this.warnOnce(`traces not projected: ${(err as Error).message} (sessions go on; this is said once)`);
    }
  }

  /** Resolves once everything taken so far has been handed to the collector (or failed, said once). */
  async flush(): Promise<void> {
    this.send();
    await this.chain;
    const exporter = this.exporter ? await this.exporter.catch(() => undefined) : undefined;
    await exporter?.forceFlush?.().catch(() => undefined);
  }

  async shutdown(): Promise<void> {
    await this.flush();
    const exporter = this.exporter ? await this.exporter.catch(() => undefined) : undefined;
    await exporter?.shutdown().catch(() => undefined);
    const metrics = this.metrics ? await this.metrics.catch(() => undefined) : undefined;
    await metrics?.shutdown();
  }

  private project(h: Handover): void {
    let at = this.known.get(h.id);
    if (!at && h.id === h.root) {
      const root = h.root;
      const p = new TraceProjector({ content: this.content, onChild: (child, sub) => this.adopt(child, sub, root) });
      this.roots.set(root, p);
      at = { p, root };
      this.known.set(h.id, at);
    }
    if (!at) {
      // A subagent whose parent's `subagent/start` has not been handed over yet.
      this.waiting.set(h.id, [...(this.waiting.get(h.id) ?? []), h]);
      return;
    }
    this.feed(at.p, h);
    const root = this.roots.get(at.root);
    if (!root) return;
    const final = h.id === h.root && (h.done === true || h.entries.some((e) => e.kind === 'session/end'));
    for (const s of root.ended(final)) this.queue.push(s);
    if (final) this.forget(h.root);
    if (this.queue.length >= this.maxBatch) this.send();
    else if (this.queue.length > 0 && !this.timer) {
      this.timer = setTimeout(() => this.send(), this.delayMs);
      this.timer.unref?.();
    }
  }

  private feed(p: TraceProjector, h: Handover): void {
    const before = h.before ?? 0;
    h.entries.forEach((e, i) => {
      p.add(e);
      // What ended before this process took the session was sent by its earlier host (or `bridle trace --otlp`).
      if (i === before - 1) p.ended();
    });
  }

  private adopt(child: string, sub: TraceProjector, root: string): void {
    this.known.set(child, { p: sub, root });
    const early = this.waiting.get(child);
    this.waiting.delete(child);
    for (const h of early ?? []) this.feed(sub, h);
  }

  /** A root that ended takes its tree with it. */
  private forget(root: string): void {
    this.roots.delete(root);
    for (const [id, at] of this.known) if (at.root === root) this.known.delete(id);
    for (const [id, hs] of this.waiting) if (hs[0]?.root === root) this.waiting.delete(id);
  }

  /** Each span comes here once: its values are recorded then, and the metrics go out with the spans' batch. */
  private send(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    // At most `OTEL_BSP_MAX_EXPORT_BATCH_SIZE` spans an export, as the SDK's processor sends them.
    while (this.queue.length > 0) {
      const spans = this.queue.splice(0, this.maxBatch);
      this.chain = this.chain.then(async () => {
        if (this.endpoint) await this.sendSpans(this.endpoint, spans);
        if (this.o.metricsEndpoint) await this.sendMetrics(this.o.metricsEndpoint, spans);
      });
    }
  }

  private async sendSpans(endpoint: string, spans: TraceSpan[]): Promise<void> {
    try {
      this.exporter ??= this.o.exporter ? Promise.resolve(this.o.exporter) : exporterOf(endpoint);
      const problem = await (await this.exporter).send(spans, this.resource);
      if (problem) this.warnOnce(`traces not taken by the collector at ${redactUrl(endpoint)}: ${problem} (sessions go on; this is said once)`);
    } catch (err) {
      this.warnOnce(`traces not exported to ${redactUrl(endpoint)}: ${(err as Error).message} (sessions go on; this is said once)`);
    }
  }

  private async sendMetrics(endpoint: string, spans: TraceSpan[]): Promise<void> {
    try {
      this.metrics ??= metricSinkOf(endpoint, this.resource, this.o.env);
      const sink = await this.metrics;
      if (sink.record(spans) === 0) return;
      const problem = await sink.export();
      if (problem) this.warnOnce(`metrics not taken by the collector at ${redactUrl(endpoint)}: ${problem} (sessions go on; this is said once)`);
    } catch (err) {
      this.warnOnce(`metrics not exported to ${redactUrl(endpoint)}: ${(err as Error).message} (sessions go on; this is said once)`);
    }
  }

  private warnOnce(line: string): void {
    if (this.warned) return;
    this.warned = true;
    this.o.warn(line);
  }
}
