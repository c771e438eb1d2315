import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { Errors, type GatewayError } from '@gateway/shared';
import type { AppContext } from '../context.js';

/**
 * The internal routes (/internal/v1/…) are for the deployment's proxies only: they send
 * INTERNAL_TOKEN as a bearer token. Not part of the public /v1 API or its OpenAPI document.
 */

/** `Bearer <token>`, compared in constant time (digests of equal length); no token configured: nobody. */
export function internalTokenMatches(header: string | undefined, token: string | undefined): boolean {
  if (token === undefined || header === undefined) return false;
  const match = /^Bearer (.+)$/i.exec(header);
  if (match === null) return false;
  const given = createHash('sha256').update(match[1]!).digest();
  const expected = createHash('sha256').update(token).digest();
  return timingSafeEqual(given, expected);
}

export function internalTokenRefused(): GatewayError {
  return Errors.internalTokenRequired();
}

/** Throws the 401 unless the request carries the internal token. */
export function requireInternalToken(req: FastifyRequest, ctx: AppContext): void {
  if (!internalTokenMatches(req.headers.authorization, ctx.config.internalToken)) throw internalTokenRefused();
}
