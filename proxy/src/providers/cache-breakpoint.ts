import { Errors } from '@gateway/shared';
import { readBreakpoint, type CacheBreakpoint } from '../request/cache-breakpoint.js';

export type { CacheBreakpoint };

/**
 * A breakpoint of an OpenAI-shape request (request/cache-breakpoint.ts), checked for an adapter
 * whose provider caches prompts and writes it in its own wire format. Anything else under that
 * name is refused rather than dropped, since the client would otherwise pay the full price
 * without knowing.
 */
export function cacheBreakpoint(value: unknown, at: string): CacheBreakpoint | undefined {
  const read = readBreakpoint(value);
  if (read === undefined || typeof read === 'object') return read;
  const where = `${at}.cache_control`;
  if (read === 'type') throw Errors.cacheControlNotEphemeral(where);
  throw Errors.cacheControlBadTtl(where);
}
