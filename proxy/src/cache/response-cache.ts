import { ContractError, decodeCacheEntry, encodeCacheEntry, type CacheEntry, type RedisClient, type RedisKeys } from '@gateway/shared';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { createCacheMetrics, type CacheMetrics } from './cache-metrics.js';

/**
 * The response cache's store: entries in Redis under the project's hash tag (RedisKeys.cacheEntry,
 * with the project's index for purges), and this proxy's single flights — the one request calling
 * the provider for a question, which every identical request arriving meanwhile waits for instead
 * of calling it too. Reads fail soft: an unreachable Redis or an unreadable entry is a miss.
 */
export class Flight {
  resolve!: (entry: CacheEntry | null) => void;
  /** The stored answer, or null when the leader's answer is not storable (the waiters then go on their own). */
  readonly done = new Promise<CacheEntry | null>((resolve) => {
    this.resolve = resolve;
  });
}

export class ResponseCache {
  /** Questions being answered by a provider now, by entry name. */
  readonly flights = new Map<string, Flight>();
  readonly metrics: CacheMetrics;

  constructor(
    private readonly redis: RedisClient,
    readonly keys: RedisKeys,
    /** Largest body stored (CACHE_MAX_ENTRY_BYTES). */
    readonly maxEntryBytes: number,
    registry: Registry,
    private readonly log: Logger,
  ) {
    this.metrics = createCacheMetrics(registry);
  }

  get(name: string): Promise<CacheEntry | null> {
    return this.redis.getBuffer(name).then(
      (raw) => {
        if (raw === null) return null;
        try {
          return decodeCacheEntry(raw);
        } catch (err) {
          // An entry of a newer proxy (or damaged): a miss, overwritten by this answer.
          if (!(err instanceof ContractError)) throw err;
          return null;
        }
      },
      () => null,
    );
  }

  /**
   * Stores an entry for `ttlMs` and names it in the project's index (one MULTI on the project's
   * slot), trimming the index of entries that expired. Not awaited by the request: a failure only
   * loses the entry.
   */
  store(projectId: string, name: string, entry: CacheEntry, ttlMs: number): void {
    const index = this.keys.cacheIndex(projectId);
    const expires = entry.created_at + ttlMs;
    this.redis
      .multi()
      .set(name, encodeCacheEntry(entry), 'PX', ttlMs)
      .zadd(index, expires, name)
      .zremrangebyscore(index, '-inf', entry.created_at)
      // The index outlives its longest entry by a little, so an idle project leaves nothing behind
      // (NX gives it a life first, GT only ever lengthens it).
      .pexpire(index, ttlMs + 60_000, 'NX')
      .pexpire(index, ttlMs + 60_000, 'GT')
      .exec()
      .then(
        (results) => {
          if (results?.some(([err]) => err !== null)) this.log.debug('response cache entry not stored');
        },
        (err: Error) => this.log.debug({ err: { message: err.message } }, 'response cache entry not stored'),
      );
  }
}
