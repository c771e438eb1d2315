import { Counter, type Registry } from 'prom-client';

/**
 * The response cache's counters, per project (DESIGN §7): lookups by result, bytes stored, and the
 * dollars hits did not spend. Only projects with the cache on touch them.
 */
export interface CacheMetrics {
  /** `result`: hit, miss, bypass. */
  lookups: Counter<'project' | 'result'>;
  /** Answers stored (`result` stored) or left out (too_large, incomplete, filtered). */
  stores: Counter<'project' | 'result'>;
  storedBytes: Counter<'project'>;
  savedUsd: Counter<'project'>;
}

export function createCacheMetrics(registry: Registry): CacheMetrics {
  return {
    lookups: new Counter({ name: 'gateway_cache_lookups_total', help: 'Response-cache lookups by project and result (hit, miss, bypass)', labelNames: ['project', 'result'] as const, registers: [registry] }),
    stores: new Counter({
      name: 'gateway_cache_stores_total',
      help: 'Answers of cache misses stored (result="stored") or not (too_large, incomplete, filtered, error)',
      labelNames: ['project', 'result'] as const,
      registers: [registry],
    }),
    storedBytes: new Counter({ name: 'gateway_cache_stored_bytes_total', help: 'Bytes of answers stored in the response cache, by project', labelNames: ['project'] as const, registers: [registry] }),
    savedUsd: new Counter({ name: 'gateway_cache_saved_usd_total', help: 'US dollars the provider calls answered from the cache would have cost, by project', labelNames: ['project'] as const, registers: [registry] }),
  };
}
