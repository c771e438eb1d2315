import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';

/** The proxy's Prometheus metrics; label values come from small fixed sets (never from input). */
export interface ProxyMetrics {
  registry: Registry;
  inFlight: CollectedGauge;
  upstreamErrors: Counter<'provider' | 'code'>;
  /** A failed attempt followed by another provider's. */
  retries: Counter<'provider'>;
  revocations: Counter;
  /** gateway_requests_total, gateway_request_duration_seconds and gateway_upstream_duration_seconds. */
  perRequest: RequestMetrics;
}

const REQUEST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const UPSTREAM_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** One labelled series of a histogram: counts per bucket (not cumulative), sum and count. */
class HistogramCells {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Record<string, string>,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

/** A metric prom-client's registry formats and aggregates across workers: read only on scrape. */
interface ScrapedMetric {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  get(): { name: string; help: string; type: 'counter' | 'histogram'; aggregator: 'sum'; values: { labels: Record<string, string | number>; value: number; metricName?: string }[] };
}

/** A counter whose series are plain cells, read only on scrape. */
export function counterMetric(name: string, help: string, series: () => { labels: Record<string, string>; value: number }[]): ScrapedMetric {
  return { name, help, type: 'counter', aggregator: 'sum', get: () => ({ name, help, type: 'counter', aggregator: 'sum', values: series() }) };
}

function histogramMetric(name: string, help: string, bounds: readonly number[], series: () => Iterable<HistogramCells>): ScrapedMetric {
  return {
    name,
    help,
    type: 'histogram',
    aggregator: 'sum',
    get() {
      const values: ReturnType<ScrapedMetric['get']>['values'] = [];
      for (const cells of series()) {
        let cumulative = 0;
        for (let i = 0; i <= bounds.length; i++) {
          cumulative += cells.counts[i] as number;
          values.push({ labels: { ...cells.labels, le: i < bounds.length ? (bounds[i] as number) : '+Inf' }, value: cumulative, metricName: `${name}_bucket` });
        }
        values.push({ labels: cells.labels, value: cells.sum, metricName: `${name}_sum` });
        values.push({ labels: cells.labels, value: cells.count, metricName: `${name}_count` });
      }
      return { name, help, type: 'histogram', aggregator: 'sum', values };
    },
  };
}

/**
 * The per-request metrics as plain numbers, found through nested maps (no label object built,
 * hashed or copied per request, as prom-client's labelled children do on every call) and turned
 * into Prometheus series only when scraped.
 */
export class RequestMetrics {
  /** endpoint → provider → model → status → count. */
  private readonly requests = new Map<string, Map<string, Map<string, Map<number, { value: number }>>>>();
  private readonly requestSeries: { labels: Record<string, string>; cell: { value: number } }[] = [];
  private readonly latency = new Map<string, HistogramCells>();
  private readonly upstreams = new Map<string, HistogramCells>();

  constructor(registry: Registry) {
    const series = this.requestSeries;
    registry.registerMetric(
      counterMetric('gateway_requests_total', 'Gateway requests by HTTP status, model, provider and endpoint (model and provider are "none" before routing)', () =>
        series.map((s) => ({ labels: s.labels, value: s.cell.value })),
      ) as never,
    );
    registry.registerMetric(histogramMetric('gateway_request_duration_seconds', 'Time from request to the end of the response', REQUEST_BUCKETS, () => this.latency.values()) as never);
    registry.registerMetric(
      histogramMetric('gateway_upstream_duration_seconds', "Time from sending a request to a provider to its answer (a stream's headers), per attempt", UPSTREAM_BUCKETS, () => this.upstreams.values()) as never,
    );
  }

  record(status: number, model: string, provider: string, endpoint: string, seconds: number): void {
    this.requestCell(status, model, provider, endpoint).value++;
    let histogram = this.latency.get(provider);
    if (histogram === undefined) {
      histogram = new HistogramCells({ provider }, REQUEST_BUCKETS);
      this.latency.set(provider, histogram);
    }
    histogram.observe(seconds);
  }

  /** Time to a provider's answer, per attempt. */
  upstream(provider: string, seconds: number): void {
    let histogram = this.upstreams.get(provider);
    if (histogram === undefined) {
      histogram = new HistogramCells({ provider }, UPSTREAM_BUCKETS);
      this.upstreams.set(provider, histogram);
    }
    histogram.observe(seconds);
  }

  private requestCell(status: number, model: string, provider: string, endpoint: string): { value: number } {
    let byProvider = this.requests.get(endpoint);
    if (byProvider === undefined) this.requests.set(endpoint, (byProvider = new Map()));
    let byModel = byProvider.get(provider);
    if (byModel === undefined) byProvider.set(provider, (byModel = new Map()));
    let byStatus = byModel.get(model);
    if (byStatus === undefined) byModel.set(model, (byStatus = new Map()));
    let cell = byStatus.get(status);
    if (cell === undefined) {
      cell = { value: 0 };
      byStatus.set(status, cell);
      this.requestSeries.push({ labels: { status: String(status), model, provider, endpoint }, cell });
    }
    return cell;
  }
}

export function createProxyMetrics(): ProxyMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'gateway_proxy_' });
  return {
    registry,
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
    revocations: new Counter({
      name: 'gateway_revoked_in_flight_total',
      help: 'Requests in flight ended because their key expired or their key or project was deleted',
      registers: [registry],
    }),
    perRequest: new RequestMetrics(registry),
  };
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
