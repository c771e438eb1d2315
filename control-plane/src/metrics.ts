import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/** Prometheus metrics of one control-plane or writer process. */
export function createRegistry(prefix: string): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix });
  return registry;
}

export function httpMetrics(registry: Registry) {
  return {
    requests: new Counter({
      name: 'control_plane_requests_total',
      help: 'Management API requests by route and status',
      labelNames: ['route', 'status'] as const,
      registers: [registry],
    }),
    latency: new Histogram({
      name: 'control_plane_request_seconds',
      help: 'Management API latency',
      labelNames: ['route'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
  };
}
