import { GatewayError } from '@gateway/shared';
import type { GatewayCall, GatewayDeps, RequestInfo } from '../chat/gateway-call.js';
import type { ErrorShape } from '../protocols/protocol.js';
import type { Exchange } from './exchange.js';

/**
 * Unauthenticated traffic is refused before it costs anything: a throttled address gets its 429
 * before a call exists (no key lookup, no body, no audit event of its own), and a request whose key
 * is missing or wrong gets its 401 before its body is read. Valid keys pay one null check here.
 */

/**
 * True when the client address is over its failed-authentication limit and the request carries
 * no key this proxy recognises: answered 429 here and counted into the address's
 * `gateway.throttled` audit event. A good key behind the same address (a NAT) is still served,
 * and a deleted key the proxy remembers still gets its own 401, attributed to its project.
 */
export function throttledAway(deps: GatewayDeps, ex: Exchange, info: RequestInfo, shape: ErrorShape): boolean {
  const throttle = deps.authThrottle;
  if (throttle === null) return false;
  const retryAfter = throttle.refuses(info.clientIp);
  if (retryAfter === 0) return false;
  if (info.apiKey !== '' && (deps.cache.peekPresented(info.apiKey) !== null || deps.cache.deadRecord(info.apiKey) !== null)) return false;
  throttle.refused(info.clientIp, info.userAgent);
  const err = new GatewayError('RATE_LIMITED', `Too many requests with a missing or invalid API key from this address; retry in ${retryAfter} s.`, { retryAfter });
  deps.metrics.perRequest.record(err.status, 'none', 'none', 'throttled', 0);
  ex.send(err.status, 'application/json', shape.errorBody(err), retryAfter);
  return true;
}

/**
 * After `call.authenticate()`, before the body is read: a refusal known now (no key, a malformed
 * or known-bad one) is answered at once and `true` returned. A key Redis is being asked about
 * comes back as the pending verdict, for `holdBodyForKey` once the body reader is in place.
 */
export function refusedBeforeBody(call: GatewayCall): boolean | Promise<GatewayError | null> {
  const refusal = call.keyRefusal();
  if (refusal === null) return false;
  if (refusal instanceof Promise) return refusal;
  call.refuseBeforeBody(refusal);
  return true;
}

/** Holds the body back (the socket is not read) until Redis has answered about the key. */
export function holdBodyForKey(ex: Exchange, call: GatewayCall, verdict: Promise<GatewayError | null>): void {
  ex.pauseBody();
  void verdict.then((err) => {
    if (err !== null) ex.discardBody();
    ex.resumeBody();
    if (err !== null) call.refuseBeforeBody(err);
  });
}
