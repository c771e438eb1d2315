import { AggregatorRegistry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createProxyMetrics } from './metrics.js';

describe('per-request metrics', () => {
  it('exports the counter and histograms in the Prometheus text format on scrape', async () => {
    const { registry, perRequest } = createProxyMetrics();
    perRequest.record(200, 'gpt-4o-mini', 'openai', 'chat.completions', 0.003);
    perRequest.record(200, 'gpt-4o-mini', 'openai', 'chat.completions', 0.0004);
    perRequest.record(401, 'none', 'none', 'chat.completions', 0.0001);
    perRequest.upstream('openai', 0.2);
    const text = await registry.metrics();
    expect(text).toContain('# TYPE gateway_requests_total counter');
    expect(text).toContain('gateway_requests_total{status="200",model="gpt-4o-mini",provider="openai",endpoint="chat.completions"} 2');
    expect(text).toContain('gateway_requests_total{status="401",model="none",provider="none",endpoint="chat.completions"} 1');
    expect(text).toContain('# TYPE gateway_request_duration_seconds histogram');
    expect(text).toContain('gateway_request_duration_seconds_bucket{provider="openai",le="0.0005"} 1');
    expect(text).toContain('gateway_request_duration_seconds_bucket{provider="openai",le="0.001"} 1');
    expect(text).toContain('gateway_request_duration_seconds_bucket{provider="openai",le="0.005"} 2');
    expect(text).toContain('gateway_request_duration_seconds_bucket{provider="openai",le="+Inf"} 2');
    expect(text).toContain('gateway_request_duration_seconds_count{provider="openai"} 2');
    expect(text).toMatch(/gateway_request_duration_seconds_sum\{provider="openai"\} 0\.0034/);
    expect(text).toContain('gateway_upstream_duration_seconds_bucket{provider="openai",le="0.1"} 0');
    expect(text).toContain('gateway_upstream_duration_seconds_bucket{provider="openai",le="0.25"} 1');
  });

  it('sums across workers', async () => {
    const workers = [createProxyMetrics(), createProxyMetrics()];
    workers.forEach((w, i) => {
      w.registry.setDefaultLabels({ worker: String(i) });
      w.perRequest.record(200, 'm', 'p', 'chat.completions', 0.01);
    });
    const merged = AggregatorRegistry.aggregate(await Promise.all(workers.map((w) => w.registry.getMetricsAsJSON())));
    const text = await merged.metrics();
    expect(text).toContain('gateway_requests_total{status="200",model="m",provider="p",endpoint="chat.completions",worker="0"} 1');
    expect(text).toContain('gateway_requests_total{status="200",model="m",provider="p",endpoint="chat.completions",worker="1"} 1');
    expect(text).toContain('gateway_request_duration_seconds_count{provider="p",worker="1"} 1');
  });
});
