/**
 * A prompt-cache breakpoint on the internal request: `cache_control` on a content part, a message
 * or a tool, as `{"type": "ephemeral"}` with an optional `"ttl"` of `"5m"` or `"1h"` (the shape
 * Anthropic's own API takes, which chat clients write too). The one rule, read where a request is
 * parsed (the Messages translation) and where an adapter writes it in its provider's format
 * (providers/cache-breakpoint.ts); each refuses in its own client's terms.
 */
export interface CacheBreakpoint {
  ttl?: '5m' | '1h';
}

/** The breakpoint `value` is; `'type'` or `'ttl'` when that field is wrong; undefined for none. */
export function readBreakpoint(value: unknown): CacheBreakpoint | 'type' | 'ttl' | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value) || (value as { type?: unknown }).type !== 'ephemeral') return 'type';
  const ttl = (value as { ttl?: unknown }).ttl;
  if (ttl === undefined || ttl === null) return {};
  return ttl === '5m' || ttl === '1h' ? { ttl } : 'ttl';
}
