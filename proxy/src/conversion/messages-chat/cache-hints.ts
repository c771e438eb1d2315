import { readBreakpoint } from '../../request/cache-breakpoint.js';
import { invalid } from '../../protocols/anthropic-messages/request-fields.js';

/**
 * A Messages body's prompt-cache breakpoints (`cache_control` on a block, a tool or the request),
 * carried on the internal request for the adapters that cache prompts (Bedrock's `cachePoint`, and
 * Anthropic's own when the body is rewritten rather than forwarded). Each is set as a
 * non-enumerable `cache_control`: an adapter reads it as it reads one a chat client wrote, while
 * JSON.stringify, spreads and key walks never see it, so a provider that takes the internal
 * request as JSON (every OpenAI-typed one) is not sent a field its client never wrote in that
 * shape. The rule for what a breakpoint is is request/cache-breakpoint.ts, shared with the
 * adapters. (A step that rebuilt a message with a spread would drop it: the prompt would then go
 * uncached, never malformed; the steps that change a message, such as masking, change it in
 * place.) Only what Anthropic's API takes is carried; anything else is refused here, naming it in
 * the client's own terms, rather than dropped (the client would pay the full price unknowing).
 */
export interface CacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

/** The breakpoint of the block at `at` ('' for the request's own), checked; undefined when it has none. */
export function cacheControlOf(holder: Record<string, unknown>, at: string): CacheControl | undefined {
  const read = readBreakpoint(holder.cache_control);
  if (read === undefined) return undefined;
  const where = at === '' ? 'cache_control' : `${at}.cache_control`;
  if (read === 'type') throw invalid(where, 'must be {"type": "ephemeral"}, with an optional "ttl" of "5m" or "1h"');
  if (read === 'ttl') throw invalid(`${where}.ttl`, "must be '5m' or '1h'");
  return read.ttl === undefined ? { type: 'ephemeral' } : { type: 'ephemeral', ttl: read.ttl };
}

/** Sets `control` on `target` out of sight of JSON; a later one (a block after it) wins. */
export function carry<T extends object>(target: T, control: CacheControl | undefined): T {
  if (control !== undefined) Object.defineProperty(target, 'cache_control', { value: control, enumerable: false, writable: true, configurable: true });
  return target;
}

/** The breakpoint carried on `source`, if any. */
export function carried(source: object): CacheControl | undefined {
  return (source as { cache_control?: CacheControl }).cache_control;
}
