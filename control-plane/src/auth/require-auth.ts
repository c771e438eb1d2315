import type { FastifyReply, FastifyRequest } from 'fastify';
import { Errors } from '@gateway/shared';
import type { AppContext } from '../context.js';
import { findUserById, toUser, type User, type UserRow } from '../db/users.js';
import type { AccessTokenClaims } from './jwt.js';
import type { AccountRole } from './permissions.js';
import { isSignedOut } from './session-signouts.js';

/**
 * The signed-in caller of a management request. The token only names the user and its session;
 * the account is read from PostgreSQL on every request (one indexed row), so a changed role
 * applies at once, and that same row says whether the account is disabled and which sessions a
 * password change ended. Sign-outs are answered by Redis alongside, not by another query.
 */
export interface Principal {
  userId: string;
  email: string;
  role: AccountRole;
  /** The account as GET /v1/users/me shows it, from the row read for this request. */
  user: User;
  /** The verified claims of the bearer token: its session, expiry and id. */
  token: AccessTokenClaims;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

/** The bearer token of the request, or null when there is none. */
export function bearerToken(req: FastifyRequest): string | null {
  const header = req.headers.authorization;
  if (header === undefined) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? null;
}

/** Verifies the bearer token and loads its user; 401 UNAUTHORIZED otherwise. */
export async function authenticate(ctx: AppContext, req: FastifyRequest): Promise<Principal> {
  const token = bearerToken(req);
  if (token === null) throw Errors.noAccessToken();
  return principalOfClaims(ctx, await ctx.jwt.verify(token));
}

/**
 * The account behind verified claims (of an access token, or of the dashboard's refresh cookie),
 * once the session is known to be alive: not too old, not signed out, not ended by a password
 * change or a disable.
 */
export async function principalOfClaims(ctx: AppContext, claims: AccessTokenClaims): Promise<Principal> {
  // Tokens never outlive their session when issued; this also ends, at once, sessions a lowered
  // SESSION_MAX_AGE_HOURS has made too old.
  if (Date.now() >= ctx.jwt.sessionEnd(claims.session)) throw Errors.sessionTooOld();
  const [user, signedOut] = await Promise.all([findUserById(ctx.sql, claims.userId), isSignedOut(ctx, claims.session.id)]);
  refuseUnusable(user, claims, signedOut);
  return { userId: user.id, email: user.email, role: user.role, user: toUser(user), token: claims };
}

/** Why a verified token still does not count, as a 401. */
function refuseUnusable(user: UserRow | null, claims: AccessTokenClaims, signedOut: boolean): asserts user is UserRow {
  if (user === null) throw Errors.tokenInvalid('access token');
  if (user.disabled) throw Errors.accountDisabled();
  if (sessionRevoked(user, claims)) throw Errors.accessTokenRevoked();
  if (signedOut) throw Errors.sessionSignedOut();
}

/**
 * Whether a password change, reset or disable ended the token's session: every session begun at
 * or before `tokens_valid_after` is over. The comparison is on the session's start in Unix ms;
 * those who set the instant wait past it before answering (afterInstant), so a sign-in made once
 * they have answered always begins later and counts.
 */
export function sessionRevoked(user: Pick<UserRow, 'tokens_valid_after'>, claims: Pick<AccessTokenClaims, 'session'>): boolean {
  return user.tokens_valid_after !== null && claims.session.startedAt <= user.tokens_valid_after.getTime();
}

/** Resolves once the clock has passed `instant` (Unix ms): at most a millisecond or so. */
export async function afterInstant(instant: number): Promise<void> {
  while (Date.now() <= instant) await new Promise((resolve) => setTimeout(resolve, 1));
}

/** onRequest hook: runs before the body is read or validated, so an anonymous caller learns nothing but 401. */
export function requireAuth(ctx: AppContext) {
  return async (req: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    req.principal = await authenticate(ctx, req);
  };
}

/** The caller of a route behind requireAuth. */
export function principalOf(req: FastifyRequest): Principal {
  if (req.principal === null) throw Errors.unauthorized();
  return req.principal;
}

/** 403 unless the caller is an account admin. */
export function requireAccountAdmin(req: FastifyRequest, what: string): Principal {
  const principal = principalOf(req);
  if (principal.role !== 'admin') throw Errors.adminsOnly(what);
  return principal;
}
