/**
 * Live export of traces (ADR 0055): while sessions run, the spans `traceOf`
 * projects from their logs are sent to the collector the standard
 * OpenTelemetry variables name (`OTEL_EXPORTER_OTLP_ENDPOINT`, or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`; headers, timeout and the rest as the
 * official exporter reads them). Nothing is recorded beside the log: a turn's
 * end marks the session's tree due, and with the next batch the tree is
 * projected again and the spans that have ended since are sent (`OTEL_BSP_SCHEDULE_DELAY`, 5 s by
 * default, and before the process exits); at the session's end, the rest. So what a collector
 * gets live is what `bridle trace --otlp` sends of the same log later.
 *
 * One `LiveTraces` a process, mounted in every session as a plugin (children
 * in this process too: their spans go out with their root's tree). An
 * exporter that fails is one warning, never a failed turn. The GenAI client
 * metrics (ADR 0058) ride along: each batch's chat spans are recorded once, as
 * they are sent, and the histograms go out after the spans.
 */
import type { Entry } from '../../log/entries.js';
import { traceOf, type TraceSpan } from '../../log/trace.js';
import type { Plugin } from '../../plugins/host.js';
import { SESSION } from '../../ports/index.js';
import type { SessionControl } from '../../ports/session.js';
import { redactUrl } from '../../safety/redact.js';
import { metricsEndpoint, metricSinkOf, type MetricSink } from './metrics.js';
import { contentOptedIn, exporterOf, signalEndpoint, traceResource, type SpanExporter, type TraceResource } from './otlp.js';

export interface LiveTracesOptions {
  /** bridle's version, for the resource (`service.version`). */
  version: string;
  env: NodeJS.ProcessEnv;
  /** One line, said once: the exporter failed (or a variable asks for what bridle does not send). */
  warn: (line: string) => void;
  /** Tests: an exporter of their own instead of the OTLP/HTTP one. */
  exporter?: SpanExporter;
  /** Where the conventions' metrics go (ADR 0058), recorded from the chat spans as they are sent; none when unset. */
  metricsEndpoint?: string;
}

/** Where the standard variables send traces, or undefined when they send none (not set, `OTEL_SDK_DISABLED`, `OTEL_TRACES_EXPORTER=none`). */
export const tracesEndpoint = (env: NodeJS.ProcessEnv): string | undefined => signalEndpoint(env, 'traces');

interface Tracked {
  control: SessionControl;
  /** Set once its `session/end` was appended. */
  ended: boolean;
}

export class LiveTraces {
  private readonly sessions = new Map<string, Tracked>();
  private readonly sent = new Set<string>();
  private chain: Promise<void> = Promise.resolve();
  private warned = false;
  private readonly resource: TraceResource;
  private readonly content: boolean;
  private exporter: Promise<SpanExporter> | undefined;
  private metrics: Promise<MetricSink> | undefined;
  /** Roots whose tree has spans to send, and whether the root has ended; projected once a batch is due. */
  private readonly dirty = new Map<string, boolean>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly delayMs: number;

  /** `endpoint` undefined: spans are projected and counted but not sent (only metrics were asked for). */
  constructor(
    private readonly endpoint: string | undefined,
    private readonly o: LiveTracesOptions,
  ) {
    this.resource = traceResource(o.version, o.env);
    this.content = contentOptedIn(o.env);
    // The batch span processor's delay, by its standard variable (default 5 s): a session is projected at most once a batch.
    const delay = Number(o.env.OTEL_BSP_SCHEDULE_DELAY);
    this.delayMs = Number.isFinite(delay) && delay >= 0 ? delay : 5000;
    const protocol = (o.env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? o.env.OTEL_EXPORTER_OTLP_PROTOCOL ?? '').trim();
    const to = endpoint ?? o.metricsEndpoint;
    if (protocol && protocol !== 'http/json' && to) this.warnOnce(`OTEL_EXPORTER_OTLP_PROTOCOL is ${protocol}; bridle sends OTLP as http/json to ${redactUrl(to)}`);
  }

  /** Mounted in every session of the process: it tracks the session and exports at each turn's end. */
  readonly plugin: Plugin = {
    name: 'live-traces',
    inject: [SESSION],
    apply: (ctx) => {
      const control = ctx.get(SESSION);
      let tracked: Tracked | undefined;
      ctx.hooks.on('session/entry', (e) => {
        // The id is the session's once it has a log: its first entry names it.
        tracked ??= this.track(control);
        if (e.kind === 'session/end') tracked.ended = true;
        if (e.kind === 'turn/end' || e.kind === 'session/end') this.due(control.id, e.kind === 'session/end');
      });
      ctx.effect(() => () => {
        if (tracked && this.sessions.get(control.id) === tracked) this.due(control.id, true);
      });
    },
  };

  /** Resolves once everything due so far has been handed to the collector (or failed, said once). */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.drain();
    await this.chain;
    const exporter = this.exporter ? await this.exporter : undefined;
    await exporter?.forceFlush?.().catch(() => undefined);
  }

  async shutdown(): Promise<void> {
    await this.flush();
    const exporter = this.exporter ? await this.exporter : undefined;
    await exporter?.shutdown().catch(() => undefined);
    const metrics = this.metrics ? await this.metrics.catch(() => undefined) : undefined;
    await metrics?.shutdown();
  }

  private track(control: SessionControl): Tracked {
    const t: Tracked = { control, ended: false };
    this.sessions.set(control.id, t);
    // A log this process goes on with: what ended before it took the session was its earlier host's to send
    // (or, after a crash, `bridle trace --otlp`'s); the entry that woke this listener is the first of this process.
    const before = control.entries().slice(0, -1);
    if (before.length > 0) for (const s of traceOf(before)) if (s.status.code !== 'unset') this.sent.add(s.spanId);
    return t;
  }

  /** The session at the top of `id`'s tree in this process: its parent's, while the parent is tracked here. */
  private rootOf(id: string): string {
    const seen = new Set<string>();
    let at = id;
    for (;;) {
      seen.add(at);
      const start = this.sessions.get(at)?.control.entries()[0];
      const parent = start?.kind === 'session/start' ? start.parent : null;
      if (!parent || !this.sessions.has(parent) || seen.has(parent)) return at;
      at = parent;
    }
  }

  /** A turn (or a session) of `id`'s tree ended: its root is projected with the next batch. */
  private due(id: string, ending: boolean): void {
    const rootId = this.rootOf(id);
    if (!this.sessions.has(rootId)) return;
    this.dirty.set(rootId, this.dirty.get(rootId) === true || (ending && rootId === id));
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.drain();
    }, this.delayMs);
    this.timer.unref?.();
  }

  /** Projects each tree that has something to send, once, and sends what ended since the last batch. */
  private drain(): void {
    const batch: TraceSpan[] = [];
    for (const [rootId, final] of this.dirty) {
      const root = this.sessions.get(rootId);
      if (!root) continue;
      const entries: readonly Entry[] = root.control.entries();
      const spans = traceOf(entries, { content: this.content, children: (child) => this.sessions.get(child)?.control.entries() });
      const fresh = spans.filter((s) => !this.sent.has(s.spanId) && (final || s.status.code !== 'unset'));
      for (const s of fresh) this.sent.add(s.spanId);
      if (final) this.forget(rootId, spans);
      batch.push(...fresh);
    }
    this.dirty.clear();
    if (batch.length > 0) this.send(batch);
  }

  /** A root that ended takes its tree with it: nothing of it is exported again. */
  private forget(rootId: string, spans: readonly TraceSpan[]): void {
    for (const id of [...this.sessions.keys()]) if (this.rootOf(id) === rootId && id !== rootId) this.sessions.delete(id);
    this.sessions.delete(rootId);
    for (const s of spans) this.sent.delete(s.spanId);
  }

  /** Each span comes here once: its values are recorded then, and the metrics go out with the spans' batch. */
  private send(spans: TraceSpan[]): void {
    this.chain = this.chain.then(async () => {
      if (this.endpoint) await this.sendSpans(this.endpoint, spans);
      if (this.o.metricsEndpoint) await this.sendMetrics(this.o.metricsEndpoint, spans);
    });
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

let live: LiveTraces | undefined;

/**
 * The process's live traces (and metrics), made on the first call when the standard variables name a collector for either; undefined
 * otherwise (and then no OpenTelemetry package is ever loaded). Contract: never throws.
 */
export function liveTraces(o: LiveTracesOptions): LiveTraces | undefined {
  if (live) return live;
  const endpoint = tracesEndpoint(o.env);
  const metrics = metricsEndpoint(o.env);
  if (!endpoint && !metrics) return undefined;
  live = new LiveTraces(endpoint, metrics ? { ...o, metricsEndpoint: metrics } : o);
  return live;
}

/** Hands what is due to the collector before the process exits (a no-op when nothing is traced). */
export async function flushLiveTraces(): Promise<void> {
  await live?.shutdown();
}
