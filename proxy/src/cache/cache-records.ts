import type { RequestContext } from '../pipeline/context.js';
import { extrasOf } from '../pipeline/request-extras.js';
import type { CacheResult } from './cache-call.js';

/**
 * What the request's records say about the cache: the audit event's `cache`, and for a hit the
 * usage record's `cache_hit` and `saved_usd` (pipeline/request-records.ts copies them). Only
 * requests of projects with the cache on get here.
 */
export function markCache(ctx: RequestContext, result: CacheResult, savedUsd: number | null): void {
  const extras = extrasOf(ctx);
  extras.cache = result;
  extras.savedUsd = savedUsd;
}
