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

/** An entry held in this proxy's memory, until its TTL (as the project's setting gave it) ends. */
interface LocalEntry {
  name: string;
  entry: CacheEntry;
  expiresAt: number;
  bytes: number;
}

/** What an entry costs in memory besides its body (the object, its name, the Map slot), roughly. */
const LOCAL_OVERHEAD_BYTES = 400;

export class ResponseCache {
  /** Questions being answered by a provider now, by entry name. */
  readonly flights = new Map<string, Flight>();
  readonly metrics: CacheMetrics;
  /**
   * Entries this proxy stored or read lately, up to `localMaxBytes`, oldest dropped first: a hit
   * found here asks Redis nothing (no round trip, no Redis CPU), which is what makes a hit cheaper
   * than a provider call. Redis stays the shared store; a purge reaches every proxy's copy through
   * the project.updated message (forgetProject).
   */
  private readonly local = new Map<string, LocalEntry>();
  private localBytes = 0;
  /**
   * The held entries in the order they came, oldest from `head`: making room walks this, not the
   * Map, whose iteration from the front passes every slot a deletion left until V8 rebuilds the
   * table (auth/bounded-map.ts tells the cost). An entry dropped otherwise (expired, replaced,
   * purged) stays here until walked past or compacted away.
   */
  private order: LocalEntry[] = [];
  private head = 0;

  constructor(
    private readonly redis: RedisClient,
    readonly keys: RedisKeys,
    /** Largest body stored (CACHE_MAX_ENTRY_BYTES). */
    readonly maxEntryBytes: number,
    registry: Registry,
    private readonly log: Logger,
    /** Memory for entries kept in this proxy (CACHE_LOCAL_BYTES); 0 keeps none. */
    private readonly localMaxBytes = 0,
  ) {
    this.metrics = createCacheMetrics(registry);
  }

  /** The entry when this proxy holds it and it is still live; never waits. */
  peek(name: string, now: number): CacheEntry | null {
    const held = this.local.get(name);
    if (held === undefined) return null;
    if (held.expiresAt > now) return held.entry;
    this.drop(name, held);
    return null;
  }

  /** Keeps an entry in this proxy's memory until `expiresAt`, making room by dropping the oldest. */
  remember(name: string, entry: CacheEntry, expiresAt: number): void {
    const bytes = entry.body.length + LOCAL_OVERHEAD_BYTES;
    if (bytes > this.localMaxBytes) return;
    const old = this.local.get(name);
    if (old !== undefined) this.drop(name, old);
    while (this.localBytes + bytes > this.localMaxBytes && this.head < this.order.length) {
      const oldest = this.order[this.head++] as LocalEntry;
      if (this.local.get(oldest.name) === oldest) this.drop(oldest.name, oldest);
    }
    const held: LocalEntry = { name, entry, expiresAt, bytes };
    this.local.set(name, held);
    this.localBytes += bytes;
    this.order.push(held);
    // Amortised O(1): rebuilt, of the entries still held, once most of it is walked past or stale.
    if (this.order.length > 2 * this.local.size + 1024) {
      this.order = this.order.slice(this.head).filter((h) => this.local.get(h.name) === h);
      this.head = 0;
    }
  }

  /** Entries held in this proxy's memory, and their bytes as counted against CACHE_LOCAL_BYTES. */
  get held(): { entries: number; bytes: number } {
    return { entries: this.local.size, bytes: this.localBytes };
  }

  /** The project changed or was purged: this proxy's copies of its entries go (rare; a scan of the held entries). */
  forgetProject(projectId: string): void {
    const tag = `{${projectId}}`;
    for (const [name, held] of this.local) if (name.includes(tag)) this.drop(name, held);
  }

  private drop(name: string, held: LocalEntry): void {
    this.local.delete(name);
    this.localBytes -= held.bytes;
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
