import { EncryptJWT, jwtDecrypt } from 'jose';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TrustedProxies } from '@gateway/shared';
import type { JwtService } from './jwt.js';
import type { OidcFlow } from './oidc.js';
import { cameOverHttps } from './refresh-cookie.js';

/**
 * What the single sign-on callback must find again (state, nonce, PKCE verifier, redirect URI)
 * rides in a cookie of the browser that started the sign-in, encrypted and authenticated
 * (JWE, A256GCM, by jose) with a key derived from JWT_SECRET: no server-side store, yet nobody can
 * read the verifier or forge a flow, and a callback in any other browser finds no cookie.
 *
 * - HttpOnly, scoped to /v1/signins/oidc, ten minutes.
 * - SameSite=Lax, not Strict: the callback is a top-level navigation from the provider's site,
 *   which Strict would send without the cookie. Lax still keeps it off cross-site subrequests.
 */
export const OIDC_FLOW_COOKIE = 'gateway_oidc_flow';
const PATH = '/v1/signins/oidc';
const TTL_SECONDS = 600;
const KEY_LABEL = 'model-gateway oidc flow cookie';

export async function setFlowCookie(req: FastifyRequest, reply: FastifyReply, jwt: JwtService, trusted: TrustedProxies, flow: OidcFlow): Promise<void> {
  const value = await new EncryptJWT({ ...flow })
    .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
    .setIssuedAt()
    .setExpirationTime(`${TTL_SECONDS}s`)
    .encrypt(jwt.deriveKey(KEY_LABEL));
  void reply.setCookie(OIDC_FLOW_COOKIE, value, { ...attributes(req, trusted), maxAge: TTL_SECONDS });
}

/** The flow this browser started, or null (none, expired, or not ours); the cookie is spent either way. */
export async function takeFlowCookie(req: FastifyRequest, reply: FastifyReply, jwt: JwtService, trusted: TrustedProxies): Promise<OidcFlow | null> {
  const value = req.cookies[OIDC_FLOW_COOKIE];
  if (value === undefined || value === '') return null;
  void reply.setCookie(OIDC_FLOW_COOKIE, '', { ...attributes(req, trusted), maxAge: 0 });
  try {
    const { payload } = await jwtDecrypt(value, jwt.deriveKey(KEY_LABEL), { requiredClaims: ['exp'] });
    const { state, nonce, codeVerifier, redirectUri } = payload as Partial<Record<keyof OidcFlow, unknown>>;
    if ([state, nonce, codeVerifier, redirectUri].some((v) => typeof v !== 'string')) return null;
    return { state, nonce, codeVerifier, redirectUri } as OidcFlow;
  } catch {
    return null;
  }
}

function attributes(req: FastifyRequest, trusted: TrustedProxies) {
  return { path: PATH, httpOnly: true, sameSite: 'lax' as const, secure: cameOverHttps(req, trusted) };
}
