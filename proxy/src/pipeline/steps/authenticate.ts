import { Errors, GatewayError, looksLikeApiKey, type KeyRecord } from '@gateway/shared';
import { malformedKeyError } from '../../auth/key-hints.js';
import { holdBodyForKey as holdBody } from '../../http/auth-gate.js';
import type { KeyCheck, RequestContext } from '../context.js';

/**
 * authenticate: the presented key is checked as soon as the headers are read (a Map lookup for a
 * known key, one Redis GET otherwise, while the body arrives), and adopted once the request is
 * ready to run. Nothing here waits unless Redis was asked.
 */

/**
 * Starts the key check (first step of every endpoint, inside the uWebSockets.js callback). A key
 * refused now (none, malformed, known bad) is answered 401 before any of the body is read:
 * unauthenticated traffic costs no body buffering. One that Redis is asked about holds the body
 * back until it answers (holdBodyForKey, from readBody).
 */
export function checkKey(ctx: RequestContext): void {
  const auth = (ctx.auth = lookUp(ctx));
  if (auth instanceof GatewayError && auth.code === 'UNAUTHORIZED') refuseKey(ctx, auth);
}

/** The body held back while Redis is asked about the key (http/auth-gate.ts); a refused key gets its 401. */
export function holdBodyForKey(ctx: RequestContext, pending: Promise<KeyRecord | GatewayError>): void {
  holdBody(ctx.ex, pending, () => ctx.finished, (err) => refuseKey(ctx, err));
}

/** A 401: counted against the client's address (auth/auth-throttle.ts) and answered. */
function refuseKey(ctx: RequestContext, err: GatewayError): void {
  ctx.deps.authThrottle?.failed(ctx.info.clientIp);
  ctx.fail(err, 'auth_failed');
}

/**
 * Adopts the key and registers the request for revocation. If any invalidation was applied since
 * the key was looked up, the lookup is repeated first: the key may be the one deleted.
 */
export function authenticate(ctx: RequestContext): void | Promise<void> {
  const auth = ctx.auth ?? lookUp(ctx);
  if (auth instanceof Promise) return auth.then((result) => recheck(ctx, result));
  return recheck(ctx, auth);
}

/** Attributes the request to its key if the proxy knows it, without asking Redis (refused before admission). */
export function identify(ctx: RequestContext): void {
  const apiKey = ctx.info.apiKey;
  if (ctx.key === null && ctx.knownKey === null && apiKey !== '' && looksLikeApiKey(apiKey)) {
    ctx.knownKey = ctx.deps.cache.peekPresented(apiKey);
  }
}

/** The key when it is known now, without waiting (a refusal before the body is read uses it). */
export function knownNow(ctx: RequestContext): KeyRecord | null {
  const auth = ctx.auth;
  return auth === null || auth instanceof GatewayError || auth instanceof Promise ? null : auth;
}

function recheck(ctx: RequestContext, result: KeyRecord | GatewayError): void | Promise<void> {
  if (ctx.finished) return;
  if (!(result instanceof GatewayError) && ctx.authEpoch !== ctx.deps.cache.currentEpoch) {
    const again = lookUp(ctx);
    if (again instanceof Promise) return again.then((record) => adopt(ctx, record));
    return adopt(ctx, again);
  }
  return adopt(ctx, result);
}

function adopt(ctx: RequestContext, result: KeyRecord | GatewayError): void {
  if (ctx.finished) return;
  if (result instanceof GatewayError) return result.code === 'UNAUTHORIZED' ? refuseKey(ctx, result) : ctx.fail(result, 'error');
  ctx.key = result;
  ctx.admitted = true;
  // An expiring key dies at its moment with no message to announce it, streams included: the
  // registry holds one timer per expiring key with requests in flight.
  ctx.deps.inFlight.add(ctx, result.expires_at);
  ctx.registered = true;
}

function lookUp(ctx: RequestContext): KeyCheck {
  const { deps } = ctx;
  const apiKey = ctx.info.apiKey;
  if (ctx.info.keyHash !== null) return lookUpHash(ctx, ctx.info.keyHash);
  if (apiKey === '') return ctx.info.missingKey ?? Errors.noApiKey();
  if (!looksLikeApiKey(apiKey)) return malformedKeyError(apiKey);
  const now = Date.now();
  if (!deps.subscriber.trusted(now, deps.keyStaleBoundMs)) {
    ctx.knownKey = deps.cache.peekPresented(apiKey);
    return Errors.keysUnverifiable();
  }
  ctx.authEpoch = deps.cache.currentEpoch;
  const found = deps.cache.lookupPresented(apiKey, now);
  if (found === null) return invalidKey(ctx, apiKey);
  if (!(found instanceof Promise)) return found;
  return found.then(
    (record) => {
      ctx.authEpoch = deps.cache.currentEpoch;
      return record ?? invalidKey(ctx, apiKey);
    },
    () => Errors.keysUnverifiable(),
  );
}

/** A batch line's key, by the hash the cache keys it by: found as a presented key is, and as dead once deleted. */
function lookUpHash(ctx: RequestContext, hash: string): KeyCheck {
  const { deps } = ctx;
  const now = Date.now();
  if (!deps.subscriber.trusted(now, deps.keyStaleBoundMs)) return Errors.keysUnverifiable();
  ctx.authEpoch = deps.cache.currentEpoch;
  const found = deps.cache.lookup(hash, now);
  if (found === null) return Errors.deadApiKey();
  if (!(found instanceof Promise)) return found;
  return found.then(
    (record) => {
      ctx.authEpoch = deps.cache.currentEpoch;
      return record ?? Errors.deadApiKey();
    },
    () => Errors.keysUnverifiable(),
  );
}

/** 401; a key this proxy knows was deleted still names its project and key in the audit event. */
function invalidKey(ctx: RequestContext, apiKey: string): GatewayError {
  ctx.knownKey = ctx.deps.cache.deadRecord(apiKey);
  return ctx.knownKey !== null ? Errors.deadApiKey() : Errors.unknownApiKey();
}
