import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '@gateway/shared';
import type { AppContext } from '../context.js';
import { findUserById } from '../db/users.js';
import type { AccountRole } from './permissions.js';

/**
 * The signed-in caller of a management request. The token only names the user; the account
 * and its role are read from Postgres on every request, so a changed role applies at once and a
 * removed account's tokens stop working.
 */
export interface Principal {
  userId: string;
  email: string;
  role: AccountRole;
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
  if (token === null) throw new GatewayError('UNAUTHORIZED', 'Send an access token as "Authorization: Bearer <token>"; get one from POST /v1/signins.');
  const claims = await ctx.jwt.verify(token);
  const user = await findUserById(ctx.sql, claims.userId);
  if (user === null) throw new GatewayError('UNAUTHORIZED', 'The access token is invalid.');
  return { userId: user.id, email: user.email, role: user.role };
}

/** onRequest hook: runs before the body is read or validated, so an anonymous caller learns nothing but 401. */
export function requireAuth(ctx: AppContext) {
  return async (req: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    req.principal = await authenticate(ctx, req);
  };
}

/** The caller of a route behind requireAuth. */
export function principalOf(req: FastifyRequest): Principal {
  if (req.principal === null) throw new GatewayError('UNAUTHORIZED');
  return req.principal;
}
