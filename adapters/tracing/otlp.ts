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
import type { TraceSpan, TraceValue } from '../../log/trace.js';

export interface TraceResource {
  /** `service.name` and the like: who produced the spans. */
  attributes: Record<string, string>;
  scope: { name: string; version: string };
}

const KIND = { internal: 0, client: 2 } as const; // the API's SpanKind: INTERNAL 0, SERVER 1, CLIENT 2
const STATUS = { unset: 0, ok: 1, error: 2 } as const; // the API's SpanStatusCode
const hr = (nanos: string): [number, number] => {
  const n = BigInt(nanos);
  return [Number(n / 1_000_000_000n), Number(n % 1_000_000_000n)];
};
const attrs = (a: Record<string, TraceValue>) => a;

/** bridle's spans as the SDK's ended spans (the shape its serializer and exporters read). */
async function readableSpans(spans: readonly TraceSpan[], resource: TraceResource): Promise<ReadableSpan[]> {
  const { resourceFromAttributes } = await import('@opentelemetry/resources');
  const res = resourceFromAttributes(resource.attributes);
  return spans.map((s) => {
    const start = hr(s.startTimeUnixNano);
    const end = hr(s.endTimeUnixNano);
    const d = BigInt(s.endTimeUnixNano) - BigInt(s.startTimeUnixNano);
    return {
      name: s.name,
      kind: KIND[s.kind],
      spanContext: () => ({ traceId: s.traceId, spanId: s.spanId, traceFlags: 1 }),
      ...(s.parentSpanId ? { parentSpanContext: { traceId: s.traceId, spanId: s.parentSpanId, traceFlags: 1 } } : {}),
      startTime: start,
      endTime: end,
      duration: hr(`${d < 0n ? 0n : d}`),
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
  const { JsonTraceSerializer } = await import('@opentelemetry/otlp-transformer');
  const bytes = JsonTraceSerializer.serializeRequest(await readableSpans(spans, resource));
  return Buffer.from(bytes ?? new Uint8Array()).toString('utf8');
}

/**
 * Sends the spans to an OTLP/HTTP traces endpoint (`…/v1/traces`).
 * Contract: never throws; resolves with the exporter's error message, or undefined once the collector took them.
 */
export async function exportOtlp(spans: readonly TraceSpan[], resource: TraceResource, url: string, headers: Record<string, string> = {}): Promise<string | undefined> {
  try {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    // Its deadline is the standard one: OTEL_EXPORTER_OTLP_TRACES_TIMEOUT or OTEL_EXPORTER_OTLP_TIMEOUT, else 10 s.
    const exporter = new OTLPTraceExporter({ url, headers });
    const items = await readableSpans(spans, resource);
    const result = await new Promise<{ code: number; error?: Error }>((resolve) => exporter.export(items, resolve));
    await exporter.shutdown().catch(() => undefined);
    return result.code === 0 ? undefined : (result.error?.message ?? 'the collector did not take the spans');
  } catch (err) {
    return (err as Error).message;
  }
}
