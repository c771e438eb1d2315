import type { Registry } from 'prom-client';
import { counterMetric } from '../metrics.js';

/**
 * The response cache's counters, per project (DESIGN §7): lookups by result, bytes stored, and the
 * dollars hits did not spend. Only projects with the cache on touch them. Plain numbers found
 * through two maps and turned into series on scrape, as the per-request metrics are (metrics.ts):
 * a hit is cheap enough that prom-client's label hashing showed in its profile.
 */
export interface CacheMetrics {
  /** `result`: hit, miss, bypass. */
  lookups: ProjectCounter;
  /** Answers stored (`result` stored) or left out (too_large, incomplete, filtered). */
  stores: ProjectCounter;
  storedBytes: ProjectCounter;
  savedUsd: ProjectCounter;
}

interface Cell {
  labels: Record<string, string>;
  value: number;
}

/** A counter labelled by project and, for some, a result from a fixed set. */
export class ProjectCounter {
  private readonly byProject = new Map<string, Map<string, Cell>>();
  private readonly cells: Cell[] = [];

  constructor(registry: Registry, name: string, help: string, private readonly withResult: boolean) {
    const cells = this.cells;
    registry.registerMetric(counterMetric(name, help, () => cells.map((c) => ({ labels: c.labels, value: c.value }))) as never);
  }

  inc(project: string, by = 1, result = ''): void {
    let byResult = this.byProject.get(project);
    if (byResult === undefined) this.byProject.set(project, (byResult = new Map()));
    let cell = byResult.get(result);
    if (cell === undefined) {
      cell = { labels: this.withResult ? { project, result } : { project }, value: 0 };
      byResult.set(result, cell);
      this.cells.push(cell);
    }
    cell.value += by;
  }
}

export function createCacheMetrics(registry: Registry): CacheMetrics {
  return {
    lookups: new ProjectCounter(registry, 'gateway_cache_lookups_total', 'Response-cache lookups by project and result (hit, miss, bypass)', true),
    stores: new ProjectCounter(registry, 'gateway_cache_stores_total', 'Answers of cache misses stored (result="stored") or not (too_large, incomplete, filtered, error)', true),
    storedBytes: new ProjectCounter(registry, 'gateway_cache_stored_bytes_total', 'Bytes of answers stored in the response cache, by project', false),
    savedUsd: new ProjectCounter(registry, 'gateway_cache_saved_usd_total', 'US dollars the provider calls answered from the cache would have cost, by project', false),
  };
}
