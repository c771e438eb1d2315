import type { CacheEntry } from '@gateway/shared';
import type { Flight } from './response-cache.js';

/**
 * What the response cache knows about one request of a project that caches: the entry's name, the
 * project's entry life, whether the answer may be stored, and, for the request that calls the
 * provider, its single flight and the stream's chunks collected as they were sent.
 */
export type CacheResult = 'hit' | 'miss' | 'bypass';

export class CacheCall {
  result: CacheResult = 'miss';
  /** Set on the request that calls the provider for its question (the waiters' leader). */
  flight: Flight | null = null;
  /** A stream's internal chunks as sent, once collecting (null: not a stream, or over the size bound). */
  chunks: string[] | null = null;
  bytes = 0;
  /** The bound was passed: the answer is served, not stored. */
  tooLarge = false;
  /** The stream ran to its end (not cut by the client, a revocation or the provider). */
  complete = false;
  /** The answer found before parse (`cacheRecall`): the lookup serves it. */
  held: CacheEntry | null = null;

  constructor(
    readonly name: string,
    readonly ttlMs: number,
    /** The answer may be stored (no `Cache-Control: no-store`). */
    readonly write: boolean,
  ) {}
}
