import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { recordRefreshToken } from '../db/refresh-tokens.js';
import type { IssuedToken, Session } from './jwt.js';
import { setRefreshCookie } from './refresh-cookie.js';

/**
 * What every way of signing in ends with, so a single sign-on session is the same as a password
 * one: an access token of a new session and, for a browser, the refresh cookie, whose token id is
 * recorded so that each refresh can rotate it (see db/refresh-tokens.ts).
 */
export async function beginSession(
  ctx: AppContext,
  req: FastifyRequest,
  reply: FastifyReply,
  userId: string,
  session: Session,
  options: { cookie: boolean },
): Promise<IssuedToken> {
  const token = await ctx.jwt.issue(userId, session);
  if (options.cookie) {
    const refresh = await ctx.jwt.issueRefresh(userId, session);
    await recordRefreshToken(ctx.sql, { sessionId: session.id, userId, tokenId: refresh.tokenId, expiresAt: new Date(ctx.jwt.sessionEnd(session)) });
    setRefreshCookie(req, reply, ctx.config.trustProxy, refresh.token, refresh.maxAgeSeconds);
  }
  return token;
}
