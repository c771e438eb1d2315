import type { RequestContext } from '../pipeline/context.js';
import type { CacheResult } from './cache-call.js';

/**
 * What the request's records say about the cache: the audit event's `cache`, and for a hit the
 * usage record's `cache_hit` and `saved_usd` (pipeline/request-records.ts copies them).
 */
export function markCache(ctx: RequestContext, result: CacheResult, savedUsd: number | null): void {
  void ctx;
  void result;
  void savedUsd;
}
