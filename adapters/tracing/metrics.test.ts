import { describe, expect, it } from 'vitest';
import { deltaHistograms, metricsEndpoint } from './metrics.js';

describe('live metrics: the standard variables', () => {
  it('decide whether and where: the metrics endpoint, else the base one plus /v1/metrics; disabled or another exporter: none', () => {
    expect(metricsEndpoint({})).toBeUndefined();
    expect(metricsEndpoint({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t/v1/traces' })).toBeUndefined();
    expect(metricsEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' })).toBe('http://c:4318/v1/metrics');
    expect(metricsEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://m/x' })).toBe('http://m/x');
    expect(metricsEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'TRUE' })).toBeUndefined();
    expect(metricsEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_METRICS_EXPORTER: 'none' })).toBeUndefined();
    expect(metricsEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_METRICS_EXPORTER: 'prometheus,otlp' })).toBe('http://c:4318/v1/metrics');
  });

  it('histograms are cumulative unless the temporality preference is delta or lowmemory', () => {
    expect(deltaHistograms({})).toBe(false);
    expect(deltaHistograms({ OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: 'cumulative' })).toBe(false);
    expect(deltaHistograms({ OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: 'Delta' })).toBe(true);
    expect(deltaHistograms({ OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: 'lowmemory' })).toBe(true);
  });
});
