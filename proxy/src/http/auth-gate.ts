import { Errors, GatewayError, type KeyRecord } from '@gateway/shared';
import type { AuthThrottle } from '../auth/auth-throttle.js';
import type { GatewayDeps, RequestInfo } from '../pipeline/context.js';
import type { ErrorShape } from '../protocols/protocol.js';
import type { Exchange } from './exchange.js';

/**
 * Unauthenticated traffic is refused before it costs anything: a throttled address gets its 429
 * before a request context exists (no key lookup, no body, no audit event of its own). A request
 * whose key is missing or wrong gets its 401 before its body is read (pipeline/steps/authenticate.ts).
 *
 * True when the client address is over its failed-authentication limit and the request carries
 * no key this proxy recognises: answered 429 here and counted into the address's
 * `gateway.throttled` audit event. A good key behind the same address (a NAT) is still served,
 * and a deleted key the proxy remembers still gets its own 401, attributed to its project.
 * Called only when the throttle is on; while nobody fails it is one size check.
 */
export function throttledAway(throttle: AuthThrottle, deps: GatewayDeps, ex: Exchange, info: RequestInfo, shape: ErrorShape): boolean {
  const retryAfter = throttle.refuses(info.clientIp);
  if (retryAfter === 0) return false;
  if (info.apiKey !== '' && (deps.cache.peekPresented(info.apiKey) !== null || deps.cache.deadRecord(info.apiKey) !== null)) return false;
  throttle.refused(info.clientIp, info.userAgent);
  const err = Errors.authThrottled(retryAfter);
  deps.metrics.perRequest.record(err.status, 'none', 'none', 'throttled', 0);
  ex.send(err.status, 'application/json', shape.errorBody(err), retryAfter);
  return true;
}

/**
 * The body is not read from the socket until Redis has answered about the key: a refused key's
 * body is dropped as it arrives (uWebSockets.js keeps the connection; closing it would reset a
 * client still sending) and `refuse` answers it; a good key's is read on. Only while Redis is
 * asked; the model endpoints and the MCP gateway both hold bodies this way.
 */
export function holdBodyForKey(ex: Exchange, pending: Promise<KeyRecord | GatewayError>, finished: () => boolean, refuse: (err: GatewayError) => void): void {
  ex.pauseBody();
  void pending.then((result) => {
    const refused = !finished() && result instanceof GatewayError && result.code === 'UNAUTHORIZED';
    if (refused) ex.discardBody();
    ex.resumeBody();
    if (refused) refuse(result);
  });
}

