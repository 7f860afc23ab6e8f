/**
 * Live metrics (ADR 0058, 0079): the GenAI conventions' client histograms
 * (operation duration, token usage, time to first chunk), fed by the chat spans
 * the live tracer projects from the log (`log/trace-metrics.ts`) and exported
 * with its batches. Aggregation is the official SDK's (`MeterProvider`,
 * histograms with the conventions' advised buckets); the OTLP/HTTP JSON request
 * is the official serializer's, posted by the official delegate that the
 * `exporter-*-otlp-http` packages are made of. Nothing here is loaded unless a
 * metrics endpoint is set.
 */
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { chatMeasurements } from '../../log/trace-metrics.js';
import { OPERATION_DURATION, TIME_TO_FIRST_CHUNK, TOKEN_USAGE } from '../../log/trace-conventions.js';
import type { TraceSpan } from '../../log/trace.js';
import { signalEndpoint, type TraceResource } from './otlp.js';
import { importFor } from '../optional-packages.js';

/** The conventions' advised boundaries (seconds, for the duration and the time to first chunk alike; tokens). */
const DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];

/**
 * Where the standard variables send metrics, or undefined when they send none: `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`,
 * else the base endpoint plus `/v1/metrics`; off with `OTEL_SDK_DISABLED=true` or an `OTEL_METRICS_EXPORTER` without `otlp`.
 */
export const metricsEndpoint = (env: NodeJS.ProcessEnv): string | undefined => signalEndpoint(env, 'metrics');

/** Histograms go delta with the `delta` and `lowmemory` preferences, as the OTLP exporters read the variable. */
export const deltaHistograms = (env: NodeJS.ProcessEnv) => ['delta', 'lowmemory'].includes((env.OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE ?? '').trim().toLowerCase());

export interface MetricSink {
  /** Records the measurements of the ended chat spans among `spans`; the caller hands each span over once. Returns how many values it recorded. */
  record(spans: readonly TraceSpan[]): number;
  /** Contract: never throws; resolves with the exporter's error message, or undefined once the collector took them. */
  export(): Promise<string | undefined>;
  shutdown(): Promise<void>;
}

/** The SDK's aggregation and the OTLP/HTTP JSON delegate, posting to `url` (`…/v1/metrics`); headers and timeout from the standard variables. */
export async function metricSinkOf(url: string, resource: TraceResource, env: NodeJS.ProcessEnv): Promise<MetricSink> {
  const [{ MeterProvider, MetricReader, AggregationTemporality }, { resourceFromAttributes }, { JsonMetricsSerializer, MetricsExporterMetricsHelper }, http] = await importFor('OpenTelemetry export', () => Promise.all([
    import('@opentelemetry/sdk-metrics'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/otlp-transformer'),
    import('@opentelemetry/otlp-exporter-base/node-http'),
  ]));
  // A reader the tracer's batches pull: no timer of its own, so values go out with the spans they came from.
  class Pulled extends MetricReader {
    protected async onForceFlush(): Promise<void> {}
    protected async onShutdown(): Promise<void> {}
  }
  const temporality = deltaHistograms(env) ? AggregationTemporality.DELTA : AggregationTemporality.CUMULATIVE;
  const reader = new Pulled({ aggregationTemporalitySelector: () => temporality });
  const provider = new MeterProvider({ resource: resourceFromAttributes(resource.attributes), readers: [reader] });
  const meter = provider.getMeter(resource.scope.name, resource.scope.version);
  const duration = meter.createHistogram(OPERATION_DURATION, { unit: 's', description: 'GenAI operation duration', advice: { explicitBucketBoundaries: DURATION_BUCKETS } });
  const tokens = meter.createHistogram(TOKEN_USAGE, { unit: '{token}', description: 'Number of input and output tokens used', advice: { explicitBucketBoundaries: TOKEN_BUCKETS } });
  const firstChunk = meter.createHistogram(TIME_TO_FIRST_CHUNK, {
    unit: 's',
    description: 'Time to receive the first chunk, measured from when the client issues the generation request to when the first chunk is received in the response stream',
    advice: { explicitBucketBoundaries: DURATION_BUCKETS },
  });
  const delegate = http.createOtlpHttpExportDelegate(
    http.convertLegacyHttpOptions({ url }, 'METRICS', 'v1/metrics', { 'Content-Type': 'application/json' }),
    JsonMetricsSerializer,
    'otlp_http_metric_exporter',
    MetricsExporterMetricsHelper,
    undefined,
  );
  return {
    record(spans) {
      const m = chatMeasurements(spans);
      for (const d of m.duration) duration.record(d.value, d.attributes);
      for (const t of m.tokens) tokens.record(t.value, t.attributes);
      for (const f of m.firstChunk) firstChunk.record(f.value, f.attributes);
      return m.duration.length + m.tokens.length + m.firstChunk.length;
    },
    async export() {
      try {
        const { resourceMetrics, errors } = await reader.collect();
        if (errors.length > 0) return String(errors[0]);
        const result = await new Promise<{ code: number; error?: Error }>((resolve) => delegate.export(resourceMetrics as ResourceMetrics, resolve));
        return result.code === 0 ? undefined : (result.error?.message ?? 'the collector did not take the metrics');
      } catch (err) {
        return (err as Error).message;
      }
    },
    async shutdown() {
      await delegate.shutdown().catch(() => undefined);
      await provider.shutdown().catch(() => undefined);
    },
  };
}
