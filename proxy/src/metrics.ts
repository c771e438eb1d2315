import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** The proxy's Prometheus metrics; label values come from small fixed sets (never from input). */
export interface ProxyMetrics {
  registry: Registry;
  requests: Counter<'status' | 'model' | 'provider' | 'endpoint'>;
  latency: Histogram<'provider'>;
  inFlight: CollectedGauge;
  upstreamErrors: Counter<'provider' | 'code'>;
  /** A failed attempt followed by another provider's. */
  retries: Counter<'provider'>;
  /** Time to a provider's answer (headers of a stream), per attempt. */
  upstreamLatency: Histogram<'provider'>;
  revocations: Counter;
  /** Cached children for the per-request counter and histogram. */
  perRequest: RequestMetrics;
}

/**
 * The labelled children the request path touches, looked up once per label set: prom-client's
 * own lookup hashes the label object on every call.
 */
export class RequestMetrics {
  private readonly counters = new Map<string, Counter.Internal>();
  private readonly histograms = new Map<string, Histogram.Internal<'provider'>>();
  private readonly upstreams = new Map<string, Histogram.Internal<'provider'>>();

  constructor(private readonly metrics: ProxyMetrics) {}

  record(status: number, model: string, provider: string, endpoint: string, seconds: number): void {
    const key = `${status}\u0000${model}\u0000${provider}\u0000${endpoint}`;
    let counter = this.counters.get(key);
    if (counter === undefined) {
      counter = this.metrics.requests.labels({ status: String(status), model, provider, endpoint });
      this.counters.set(key, counter);
    }
    counter.inc();
    let histogram = this.histograms.get(provider);
    if (histogram === undefined) {
      histogram = this.metrics.latency.labels({ provider });
      this.histograms.set(provider, histogram);
    }
    histogram.observe(seconds);
  }

  /** Time to a provider's answer, per attempt. */
  upstream(provider: string, seconds: number): void {
    let histogram = this.upstreams.get(provider);
    if (histogram === undefined) {
      histogram = this.metrics.upstreamLatency.labels({ provider });
      this.upstreams.set(provider, histogram);
    }
    histogram.observe(seconds);
  }
}

export function createProxyMetrics(): ProxyMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'gateway_proxy_' });
  const metrics: Omit<ProxyMetrics, 'perRequest'> & { perRequest?: RequestMetrics } = {
    registry,
    requests: new Counter({
      name: 'gateway_requests_total',
      help: 'Gateway requests by HTTP status, model, provider and endpoint (model and provider are "none" before routing)',
      labelNames: ['status', 'model', 'provider', 'endpoint'] as const,
      registers: [registry],
    }),
    latency: new Histogram({
      name: 'gateway_request_duration_seconds',
      help: 'Time from request to the end of the response',
      labelNames: ['provider'] as const,
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    }),
    inFlight: collectedGauge(registry, 'gateway_requests_in_flight', 'Requests being served'),
    upstreamErrors: new Counter({
      name: 'gateway_upstream_errors_total',
      help: 'Provider failures by provider and gateway error code',
      labelNames: ['provider', 'code'] as const,
      registers: [registry],
    }),
    retries: new Counter({
      name: 'gateway_upstream_retries_total',
      help: 'Attempts that failed and were retried on the next provider of the route, by the provider that failed',
      labelNames: ['provider'] as const,
      registers: [registry],
    }),
    upstreamLatency: new Histogram({
      name: 'gateway_upstream_duration_seconds',
      help: "Time from sending a request to a provider to its answer (a stream's headers), per attempt",
      labelNames: ['provider'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    }),
    revocations: new Counter({
      name: 'gateway_revoked_in_flight_total',
      help: 'Requests in flight ended because their key expired or their key or project was deleted',
      registers: [registry],
    }),
  };
  metrics.perRequest = new RequestMetrics(metrics as ProxyMetrics);
  return metrics as ProxyMetrics;
}

/** Requests waiting for a provider connection, read from each adapter's pool on scrape. */
export function registerQueueDepth(registry: Registry, adapters: readonly { name: string; queueDepth?(): number }[]): void {
  new Gauge({
    name: 'gateway_upstream_queued',
    help: 'Requests waiting for a connection to the provider (at max_queued further ones get 503)',
    labelNames: ['provider'] as const,
    registers: [registry],
    collect() {
      for (const adapter of adapters) this.set({ provider: adapter.name }, adapter.queueDepth?.() ?? 0);
    },
  });
}

/** Provider health (routing/target-health.ts), read on scrape. */
export function registerCooldowns(registry: Registry, health: ReadonlyMap<string, { cooldowns: number; state: string }>): void {
  new Gauge({
    name: 'gateway_upstream_cooldowns',
    help: 'Times the provider entered a cooldown since start (skipped after consecutive failures)',
    labelNames: ['provider'] as const,
    registers: [registry],
    collect() {
      for (const [provider, h] of health) this.set({ provider }, h.cooldowns);
    },
  });
  new Gauge({
    name: 'gateway_upstream_cooling',
    help: '1 while the provider is skipped or on trial after failures (cooldown, half-open), else 0',
    labelNames: ['provider'] as const,
    registers: [registry],
    collect() {
      for (const [provider, h] of health) this.set({ provider }, h.state === 'closed' ? 0 : 1);
    },
  });
}

/** A gauge whose value is read when Prometheus scrapes, from a count the process keeps anyway. */
export interface CollectedGauge {
  setCollector(read: () => number): void;
}

function collectedGauge(registry: Registry, name: string, help: string): CollectedGauge {
  let read: () => number = () => 0;
  new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set(read());
    },
  });
  return {
    setCollector(fn) {
      read = fn;
    },
  };
}
