/**
 * The `otlp` provider of traces: bridle's spans (`log/trace.ts`, a
 * projection of the log) handed to the official OpenTelemetry JS packages —
 * encoded as OTLP/JSON by `@opentelemetry/otlp-transformer`'s serializer, or
 * sent to an OTLP/HTTP endpoint by `@opentelemetry/exporter-trace-otlp-http`.
 * The packages are imported only when a trace is asked for, so a run that is
 * not traced loads none of them (ADR 0045). The 0.223 / 2.12 lines are the
 * last that run on Node 20 (0.300 and 3.x need Node ≥ 22.15).
 */
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { TraceSpan } from '../../log/trace.js';
import type { TraceValue } from '../../log/trace-conventions.js';
import { importFor } from '../optional-packages.js';

export interface TraceResource {
  /** `service.name` and the like: who produced the spans. */
  attributes: Record<string, string>;
  scope: { name: string; version: string };
}

const KIND = { internal: 0, client: 2 } as const; // the API's SpanKind: INTERNAL 0, SERVER 1, CLIENT 2
const STATUS = { unset: 0, ok: 1, error: 2 } as const; // the API's SpanStatusCode
/** Nanoseconds in decimal as the SDK's [seconds, nanoseconds]: cut nine digits from the end (no BigInt a span: ADR 0106). */
const hr = (nanos: string): [number, number] => {
  if (nanos.startsWith('-')) {
    const n = BigInt(nanos);
    return [Number(n / 1_000_000_000n), Number(n % 1_000_000_000n)];
  }
  return [Number(nanos.slice(0, -9)), Number(nanos.slice(-9))];
};
/** From `start` to `end` as [seconds, nanoseconds], none when `end` is before `start`. */
const between = (start: [number, number], end: [number, number]): [number, number] => {
  if (start[1] < 0 || end[1] < 0 || start[0] < 0 || end[0] < 0) {
    const d = BigInt(end[0] - start[0]) * 1_000_000_000n + BigInt(end[1] - start[1]);
    return hr(`${d < 0n ? 0n : d}`);
  }
  const carry = end[1] < start[1] ? 1 : 0;
  const seconds = end[0] - start[0] - carry;
  return seconds < 0 ? [0, 0] : [seconds, end[1] - start[1] + carry * 1_000_000_000];
};
const attrs = (a: Record<string, TraceValue>) => a;

/** bridle's spans as the SDK's ended spans (the shape its serializer and exporters read). */
async function readableSpans(spans: readonly TraceSpan[], resource: TraceResource): Promise<ReadableSpan[]> {
  const { resourceFromAttributes } = await importFor('OpenTelemetry export', () => import('@opentelemetry/resources'));
  const res = resourceFromAttributes(resource.attributes);
  return spans.map((s) => {
    const start = hr(s.startTimeUnixNano);
    const end = hr(s.endTimeUnixNano);
    return {
      name: s.name,
      kind: KIND[s.kind],
      spanContext: () => ({ traceId: s.traceId, spanId: s.spanId, traceFlags: 1 }),
      ...(s.parentSpanId ? { parentSpanContext: { traceId: s.traceId, spanId: s.parentSpanId, traceFlags: 1 } } : {}),
      startTime: start,
      endTime: end,
      duration: between(start, end),
      ended: true,
      status: { code: STATUS[s.status.code], ...(s.status.message ? { message: s.status.message } : {}) },
      attributes: attrs(s.attributes),
      links: s.links.map((l) => ({ context: { traceId: l.traceId, spanId: l.spanId, traceFlags: 1 }, attributes: attrs(l.attributes) })),
      events: s.events.map((e) => ({ name: e.name, time: hr(e.timeUnixNano), attributes: attrs(e.attributes) })),
      resource: res,
      instrumentationScope: resource.scope,
      droppedAttributesCount: 0,
      droppedEventsCount: 0,
      droppedLinksCount: 0,
    } as ReadableSpan;
  });
}

/** Contract: the same spans and resource give the same bytes: an OTLP/JSON `ExportTraceServiceRequest`. */
export async function otlpJson(spans: readonly TraceSpan[], resource: TraceResource): Promise<string> {
  const { JsonTraceSerializer } = await importFor('OpenTelemetry export', () => import('@opentelemetry/otlp-transformer'));
  const bytes = JsonTraceSerializer.serializeRequest(await readableSpans(spans, resource));
  return Buffer.from(bytes ?? new Uint8Array()).toString('utf8');
}

/** Something that hands spans to a collector: the OTLP/HTTP exporter, or a test's. */
export interface SpanExporter {
  /** Contract: never throws; resolves with the exporter's error message, or undefined once the collector took them. */
  send(spans: readonly TraceSpan[], resource: TraceResource): Promise<string | undefined>;
  forceFlush?(): Promise<void>;
  shutdown(): Promise<void>;
}

/**
 * The official OTLP/HTTP exporter, posting to `url` (`…/v1/traces`). Its headers, timeout and certificates are
 * the standard variables' (`OTEL_EXPORTER_OTLP_HEADERS`, `…_TIMEOUT`, …), as the package reads them.
 */
export async function exporterOf(url: string, headers: Record<string, string> = {}): Promise<SpanExporter> {
  const { OTLPTraceExporter } = await importFor('OpenTelemetry export', () => import('@opentelemetry/exporter-trace-otlp-http'));
  const exporter = new OTLPTraceExporter({ url, headers });
  return {
    async send(spans, resource) {
      try {
        const items = await readableSpans(spans, resource);
        const result = await new Promise<{ code: number; error?: Error }>((resolve) => exporter.export(items, resolve));
        return result.code === 0 ? undefined : (result.error?.message ?? 'the collector did not take the spans');
      } catch (err) {
        return (err as Error).message;
      }
    },
    forceFlush: () => exporter.forceFlush(),
    shutdown: () => exporter.shutdown(),
  };
}

/**
 * Sends the spans to an OTLP/HTTP traces endpoint (`…/v1/traces`), once.
 * Contract: never throws; resolves with the exporter's error message, or undefined once the collector took them.
 */
export async function exportOtlp(spans: readonly TraceSpan[], resource: TraceResource, url: string, headers: Record<string, string> = {}): Promise<string | undefined> {
  try {
    const exporter = await exporterOf(url, headers);
    const problem = await exporter.send(spans, resource);
    await exporter.shutdown().catch(() => undefined);
    return problem;
  } catch (err) {
    return (err as Error).message;
  }
}

/** The conventions' opt-in for message content: only when it is exactly `true` (case aside). */
export const contentOptedIn = (env: NodeJS.ProcessEnv) => (env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT ?? '').toLowerCase() === 'true';

/**
 * Who produced the spans: `service.name` bridle (or `OTEL_SERVICE_NAME`) and its version, with the
 * `OTEL_RESOURCE_ATTRIBUTES` a user set (comma-separated `key=value`, values percent-encoded), as every
 * OpenTelemetry SDK reads them; a malformed pair is skipped.
 */
export function traceResource(version: string, env: NodeJS.ProcessEnv = {}): TraceResource {
  const attributes: Record<string, string> = {};
  for (const pair of (env.OTEL_RESOURCE_ATTRIBUTES ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    try {
      attributes[pair.slice(0, at).trim()] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      // A value that is not valid percent-encoding is left out, as the SDKs do.
    }
  }
  attributes['service.name'] = env.OTEL_SERVICE_NAME?.trim() || attributes['service.name'] || 'bridle';
  attributes['service.version'] = version;
  return { attributes, scope: { name: 'bridle', version } };
}

/**
 * Where the standard variables send a signal, or undefined when they send it nowhere: `OTEL_EXPORTER_OTLP_<SIGNAL>_ENDPOINT`,
 * else the base endpoint plus `/v1/<signal>`; off with `OTEL_SDK_DISABLED=true` or an `OTEL_<SIGNAL>_EXPORTER` without `otlp`.
 */
export function signalEndpoint(env: NodeJS.ProcessEnv, signal: 'traces' | 'metrics'): string | undefined {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return undefined;
  const name = signal.toUpperCase();
  const exporters = (env[`OTEL_${name}_EXPORTER`] ?? '').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
  if (exporters.length > 0 && !exporters.includes('otlp')) return undefined;
  const own = env[`OTEL_EXPORTER_OTLP_${name}_ENDPOINT`]?.trim();
  if (own) return own;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  return base ? `${base.replace(/\/+$/, '')}/v1/${signal}` : undefined;
}
