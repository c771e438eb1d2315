import { GatewayError } from '@gateway/shared';

/**
 * A prompt-cache breakpoint of an OpenAI-shape request: `cache_control` on a content part, a
 * message or a tool, as `{"type": "ephemeral"}` with an optional `"ttl"` of `"5m"` or `"1h"` (the
 * shape Anthropic's own API takes). Each adapter whose provider caches prompts writes it in its own
 * wire format; anything else under that name is refused rather than dropped, since the client
 * would otherwise pay the full price without knowing.
 */
export interface CacheBreakpoint {
  ttl?: '5m' | '1h';
}

/** The breakpoint at `at` (a request path such as `messages[0].content[1]`), or undefined when none. */
export function cacheBreakpoint(value: unknown, at: string): CacheBreakpoint | undefined {
  if (value === undefined || value === null) return undefined;
  const where = `${at}.cache_control`;
  const control = value as { type?: unknown; ttl?: unknown };
  if (typeof value !== 'object' || Array.isArray(value) || control.type !== 'ephemeral') {
    throw new GatewayError('INVALID_REQUEST', `\`${where}\` must be {"type": "ephemeral"}, with an optional "ttl" of "5m" or "1h".`, { param: where });
  }
  if (control.ttl === undefined) return {};
  if (control.ttl !== '5m' && control.ttl !== '1h') throw new GatewayError('INVALID_REQUEST', `\`${where}.ttl\` must be "5m" or "1h".`, { param: `${where}.ttl` });
  return { ttl: control.ttl };
}
