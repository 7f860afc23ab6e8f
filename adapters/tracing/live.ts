/**
 * Live export of traces (ADR 0055, ADR 0080): while sessions run, the spans `traceOf`
 * projects from their logs are sent to the collector the standard
 * OpenTelemetry variables name (`OTEL_EXPORTER_OTLP_ENDPOINT`, or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`; headers, timeout and the rest as the
 * official exporter reads them). Nothing is recorded beside the log: at a turn's
 * end (and the session's) the entries appended since are handed over to a
 * `TraceBatcher`, which projects each entry once (`TraceProjector`, `traceOf` an
 * entry at a time) and sends the spans that ended as the batch span processor's
 * variables say (`OTEL_BSP_SCHEDULE_DELAY`, 5 s by default;
 * `OTEL_BSP_MAX_EXPORT_BATCH_SIZE`, 512), and before the process exits. So what a
 * collector gets live is what `bridle trace --otlp` sends of the same log later.
 *
 * The batcher runs in a worker thread (`live-worker.ts`): the projection, the
 * official packages' encoding and the POST are off the thread the sessions step
 * on, which only hands entries over. A test that gives its own exporter keeps it
 * on its thread. One `LiveTraces` a process, mounted in every session as a plugin
 * (children in this process too: their spans go out with their root's tree). An
 * exporter that fails is one warning, never a failed turn. The GenAI client
 * metrics (ADR 0058) ride along: each batch's chat spans are recorded once, as
 * they are sent, and the histograms go out after the spans.
 */
import { Worker } from 'node:worker_threads';
import type { Entry } from '../../log/entries.js';
import type { Plugin } from '../../plugins/host.js';
import { SESSION } from '../../ports/index.js';
import type { SessionControl } from '../../ports/session.js';
import { redactUrl } from '../../safety/redact.js';
import { metricsEndpoint } from './metrics.js';
import { signalEndpoint, type SpanExporter } from './otlp.js';
import { TraceBatcher, type Handover } from './live-batch.js';
import type { FromWorker, ToWorker, WorkerSetup } from './live-worker.js';

export interface LiveTracesOptions {
  /** bridle's version, for the resource (`service.version`). */
  version: string;
  env: NodeJS.ProcessEnv;
  /** One line, said once: the exporter failed (or a variable asks for what bridle does not send). */
  warn: (line: string) => void;
  /** Tests: an exporter of their own instead of the OTLP/HTTP one (the batcher then stays on this thread). */
  exporter?: SpanExporter;
  /** Where the conventions' metrics go (ADR 0058), recorded from the chat spans as they are sent; none when unset. */
  metricsEndpoint?: string;
  /** Run the batcher in a worker thread (what `liveTraces` does); else on this thread. Ignored with `exporter`. */
  worker?: boolean;
  /** The bench's: another script for the worker thread (one that only receives, to tell the hand-over's cost from the export's). */
  workerScript?: URL;
}

/** Where the standard variables send traces, or undefined when they send none (not set, `OTEL_SDK_DISABLED`, `OTEL_TRACES_EXPORTER=none`). */
export const tracesEndpoint = (env: NodeJS.ProcessEnv): string | undefined => signalEndpoint(env, 'traces');

interface Tracked {
  control: SessionControl;
  /** How many of its entries were handed over. */
  handed: number;
  /** Entries from before this process took the session (said with its first hand-over). */
  before: number;
  /** For the worker: the entries seen by `session/entry` since the last hand-over, each with its log line. */
  lines: { entry: Entry; line: string }[];
}

/** An entry's log line: the one `session/entry` carried, else (an entry the hook did not see) its JSON. */
type LineOf = (e: Entry) => string;

/** Where hand-overs go: a batcher on this thread, or the worker's. */
interface Sink {
  /** Whether `take` posts lines (so `LiveTraces` keeps them); a batcher on this thread takes the entries as they are. */
  readonly lines?: boolean;
  take(h: Handover, lineOf: LineOf): void;
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

/** The batcher in a worker thread; a worker that fails is one warning, and its flushes resolve. */
class WorkerSink implements Sink {
  private readonly worker: Worker;
  private n = 0;
  private readonly waits = new Map<number, () => void>();
  private dead = false;
  readonly lines = true;

  constructor(setup: WorkerSetup, env: NodeJS.ProcessEnv, warn: (line: string) => void, script = new URL('./live-worker.js', import.meta.url)) {
    this.worker = new Worker(script, { workerData: setup, env: { ...env } });
    this.worker.unref();
    this.worker.on('message', (m: FromWorker) => {
      if (m.kind === 'warn') warn(m.line);
      else this.release(m.n);
    });
    const down = (why: string) => {
      if (!this.dead) warn(`traces not exported: the export thread stopped (${why}) (sessions go on; this is said once)`);
      this.dead = true;
      for (const n of [...this.waits.keys()]) this.release(n);
    };
    this.worker.on('error', (err) => down(err.message));
    this.worker.on('exit', (code) => {
      if (this.waits.size > 0 || code !== 0) down(`exit ${code}`);
      this.dead = true;
    });
  }

  /** One string a hand-over, not a structured clone of its entries' objects (ADR 0098: about 5% of a traced step's CPU). */
  take(h: Handover, lineOf: LineOf): void {
    if (this.dead) return;
    const { entries, ...rest } = h;
    let lines = '';
    for (let i = 0; i < entries.length; i++) lines += i === 0 ? lineOf(entries[i]!) : `\n${lineOf(entries[i]!)}`;
    this.post({ kind: 'take', h: { ...rest, lines } });
  }

  flush(): Promise<void> {
    return this.ask('flush');
  }

  shutdown(): Promise<void> {
    return this.ask('shutdown');
  }

  private ask(kind: 'flush' | 'shutdown'): Promise<void> {
    if (this.dead) return Promise.resolve();
    const n = ++this.n;
    const done = new Promise<void>((resolve) => this.waits.set(n, resolve));
    // Waiting on the worker keeps the process up until it answers.
    this.worker.ref();
    this.post({ kind, n });
    return done;
  }

  private release(n: number): void {
    this.waits.get(n)?.();
    this.waits.delete(n);
    if (this.waits.size === 0) this.worker.unref();
  }

  private post(m: ToWorker): void {
    this.worker.postMessage(m);
  }
}

export class LiveTraces {
  private readonly sessions = new Map<string, Tracked>();
  private readonly sink: Sink;
  private warned = false;

  /** `endpoint` undefined: spans are projected and counted but not sent (only metrics were asked for). */
  constructor(endpoint: string | undefined, o: LiveTracesOptions) {
    const warn = (line: string) => {
      if (this.warned) return;
      this.warned = true;
      o.warn(line);
    };
    const protocol = (o.env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? o.env.OTEL_EXPORTER_OTLP_PROTOCOL ?? '').trim();
    const to = endpoint ?? o.metricsEndpoint;
    if (protocol && protocol !== 'http/json' && to) warn(`OTEL_EXPORTER_OTLP_PROTOCOL is ${protocol}; bridle sends OTLP as http/json to ${redactUrl(to)}`);
    const batch = { version: o.version, env: o.env, warn, ...(o.exporter ? { exporter: o.exporter } : {}), ...(o.metricsEndpoint ? { metricsEndpoint: o.metricsEndpoint } : {}) };
    this.sink = o.worker && !o.exporter ? new WorkerSink({ endpoint, version: o.version, ...(o.metricsEndpoint ? { metricsEndpoint: o.metricsEndpoint } : {}) }, o.env, warn, o.workerScript) : new TraceBatcher(endpoint, batch);
  }

  /** Mounted in every session of the process: it tracks the session and hands its entries over at each turn's end. */
  readonly plugin: Plugin = {
    name: 'live-traces',
    inject: [SESSION],
    apply: (ctx) => {
      const control = ctx.get(SESSION);
      let tracked: Tracked | undefined;
      ctx.hooks.on('session/entry', (e, line) => {
        // The id is the session's once it has a log: its first entry names it.
        tracked ??= this.track(control);
        if (this.sink.lines) tracked.lines.push({ entry: e, line });
        if (e.kind === 'turn/end' || e.kind === 'session/end') this.handOver(control.id, e.kind === 'session/end');
      });
      ctx.effect(() => () => {
        if (tracked && this.sessions.get(control.id) === tracked) this.handOver(control.id, true);
      });
    },
  };

  /** Resolves once everything handed over so far has been handed to the collector (or failed, said once). */
  async flush(): Promise<void> {
    for (const id of [...this.sessions.keys()]) this.handOver(id, false);
    await this.sink.flush();
  }

  async shutdown(): Promise<void> {
    await this.flush();
    await this.sink.shutdown();
  }

  private track(control: SessionControl): Tracked {
    // A log this process goes on with: what ended before it took the session was its earlier host's to send
    // (or, after a crash, `bridle trace --otlp`'s); the entry that woke this listener is the first of this process.
    const t: Tracked = { control, handed: 0, before: control.entries().length - 1, lines: [] };
    this.sessions.set(control.id, t);
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

  /** The entries `id` appended since its last hand-over go to the batcher; a root that is done takes its tree with it. */
  private handOver(id: string, done: boolean): void {
    const t = this.sessions.get(id);
    if (!t) return;
    const all = t.control.entries();
    const root = this.rootOf(id);
    const entries = all.slice(t.handed);
    if (entries.length === 0 && !done) return;
    const h: Handover = { id, root, entries, ...(t.handed === 0 && t.before > 0 ? { before: t.before } : {}), ...(done ? { done } : {}) };
    t.handed = all.length;
    // The lines come in log order, as the entries do; an entry without one (from before this process, or a report
    // the hook does not see) is serialized here.
    const kept = t.lines;
    t.lines = [];
    let j = 0;
    this.sink.take(h, (e) => {
      while (j < kept.length && kept[j]!.entry.seq < e.seq) j++;
      return kept[j]?.entry === e ? kept[j++]!.line : JSON.stringify(e);
    });
    if (done && root === id) {
      const tree = [...this.sessions.keys()].filter((other) => other === id || this.rootOf(other) === id);
      for (const other of tree) this.sessions.delete(other);
    }
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
  live = new LiveTraces(endpoint, { worker: true, ...o, ...(metrics ? { metricsEndpoint: metrics } : {}) });
  return live;
}

/** Hands what is due to the collector before the process exits (a no-op when nothing is traced). */
export async function flushLiveTraces(): Promise<void> {
  await live?.shutdown();
}
