import { Errors, waitForReplica } from '@gateway/shared';
import type { AppContext } from '../context.js';
import type { Queryable } from '../db/connect.js';
import { insertSignout, isSessionSignedOut, liveSignouts } from '../db/signouts.js';
import type { AccessTokenClaims } from './jwt.js';

/**
 * Sign-outs. A signed-out session is a Redis key with a TTL (the per-request check: one Redis
 * round trip, run alongside the user-row read the request makes anyway, so no extra PostgreSQL
 * query) and a row in session_signouts (the durable copy). Redis may run without persistence: a
 * marker key says the rows were copied into this Redis, and where it is missing (Redis came back
 * empty) the copy is made again before any answer. While Redis is unreachable, the check asks
 * PostgreSQL instead, so a sign-out holds through an outage too.
 */

/** Until when the session could still have a live token: the later of this token's expiry and the session's end. */
function signoutExpiry(ctx: AppContext, claims: AccessTokenClaims): number {
  return Math.max(claims.expiresAt, ctx.jwt.sessionEnd(claims.session));
}

/**
 * Ends the session of `claims`, inside the caller's transaction: should Redis refuse the key, the
 * transaction (and its audit event) rolls back and the caller gets 503, never a sign-out that
 * only half happened.
 */
export async function signOutSession(ctx: AppContext, tx: Queryable, userId: string, claims: AccessTokenClaims): Promise<void> {
  if (ctx.redis.status !== 'ready') throw Errors.signoutUnavailable();
  const expiresAt = signoutExpiry(ctx, claims);
  await insertSignout(tx, { sessionId: claims.session.id, userId, expiresAt: new Date(expiresAt) });
  await ctx.redis.set(ctx.keys.sessionSignedOut(claims.session.id), '1', 'PX', Math.max(1, expiresAt - Date.now()));
  // The marker beside it would survive a failover that lost this key: wait for a replica.
  await waitForReplica(ctx.redis, ctx.keys.sessionSignedOut(claims.session.id));
}

export async function isSignedOut(ctx: AppContext, sessionId: string): Promise<boolean> {
  // An offline client would queue the commands until Redis returns; PostgreSQL answers now.
  if (ctx.redis.status !== 'ready') return isSessionSignedOut(ctx.sql, sessionId);
  let loaded: unknown;
  let signedOut: unknown;
  try {
    const results = await ctx.redis.pipeline().get(ctx.keys.signoutsLoaded).get(ctx.keys.sessionSignedOut(sessionId)).exec();
    loaded = results?.[0]?.[1] ?? null;
    signedOut = results?.[1]?.[1] ?? null;
  } catch {
    return isSessionSignedOut(ctx.sql, sessionId);
  }
  if (signedOut !== null) return true;
  if (loaded !== null) return false;
  const live = await reloadSignouts(ctx);
  return live.has(sessionId);
}

/** Copies every live sign-out from PostgreSQL into Redis, then sets the marker. Idempotent, so replicas may race. */
export async function reloadSignouts(ctx: AppContext): Promise<Set<string>> {
  const rows = await liveSignouts(ctx.sql);
  const now = Date.now();
  const pipeline = ctx.redis.pipeline();
  for (const row of rows) pipeline.set(ctx.keys.sessionSignedOut(row.session_id), '1', 'PX', Math.max(1, row.expires_at.getTime() - now));
  pipeline.set(ctx.keys.signoutsLoaded, String(now));
  await pipeline.exec();
  ctx.log.info({ signouts: rows.length }, 'sign-outs copied into Redis');
  return new Set(rows.map((r) => r.session_id));
}
