import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TrustedProxies } from '@gateway/shared';

/**
 * The dashboard's session cookie: a refresh token (jwt.ts, REFRESH_AUDIENCE) that lets a reload or
 * a new tab get an access token again, while the access token itself stays in the page's memory.
 *
 * - HttpOnly: no script on the page can read it, so an injected script cannot carry it away.
 * - Path=/v1/signins: the browser sends it to the refresh route only, never with other API calls.
 * - SameSite=Strict: no other site's page makes the browser send it.
 * - Secure whenever the request came over HTTPS (directly, or through a trusted proxy that says
 *   so in X-Forwarded-Proto); plain http://127.0.0.1 during development keeps working.
 *
 * It only ever mints an access token. The refresh grant also insists on the X-Requested-With
 * header when it uses the cookie, which a cross-site form cannot send and a cross-site script
 * cannot send without a CORS preflight this API never grants.
 */
export const REFRESH_COOKIE = 'gateway_session';
export const REFRESH_COOKIE_PATH = '/v1/signins';
export const CSRF_HEADER = 'x-requested-with';

export function refreshCookieOf(req: FastifyRequest): string | null {
  const value = req.cookies[REFRESH_COOKIE];
  return value === undefined || value === '' ? null : value;
}

export function setRefreshCookie(req: FastifyRequest, reply: FastifyReply, trusted: TrustedProxies, token: string, maxAgeSeconds: number): void {
  void reply.setCookie(REFRESH_COOKIE, token, { ...cookieAttributes(req, trusted), maxAge: maxAgeSeconds });
}

/** Max-Age=0 tells the browser to drop it; the path must match the one it was set with. */
export function clearRefreshCookie(req: FastifyRequest, reply: FastifyReply, trusted: TrustedProxies): void {
  void reply.setCookie(REFRESH_COOKIE, '', { ...cookieAttributes(req, trusted), maxAge: 0 });
}

function cookieAttributes(req: FastifyRequest, trusted: TrustedProxies) {
  return { path: REFRESH_COOKIE_PATH, httpOnly: true, sameSite: 'strict' as const, secure: cameOverHttps(req, trusted) };
}

/** HTTPS on the socket itself, or a trusted proxy in front that terminated it. */
export function cameOverHttps(req: FastifyRequest, trusted: TrustedProxies): boolean {
  if ((req.socket as { encrypted?: boolean }).encrypted === true) return true;
  const forwarded = req.headers['x-forwarded-proto'];
  const proto = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim().toLowerCase();
  return proto === 'https' && trusted.trusts(req.socket.remoteAddress ?? '');
}
