import { randomUUID } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT, type JWTHeaderParameters } from 'jose';
import { Errors } from '@gateway/shared';
import { JWT_ALGORITHM, JWT_ISSUER, type AccessTokenClaims, type JwtService } from '../auth/jwt.js';

/**
 * A download ticket: what lets a browser fetch GET /v1/usage/export/download by a plain link, so
 * the file streams to disk as the control plane writes it, instead of a script holding the whole
 * export in memory to add an Authorization header. The ticket is a JWT of the caller's session
 * with its own audience (it is no bearer anywhere else, and no bearer is a ticket), signed with the
 * management tokens' secret, and lives one minute: the link is made just before it is followed.
 * The session is checked again when the ticket is used, so a sign-out or a disabled account ends
 * an unused ticket too.
 */
export const EXPORT_TICKET_AUDIENCE = 'model-gateway/usage-export';
export const EXPORT_TICKET_TTL_SECONDS = 60;

export async function issueExportTicket(jwt: JwtService, claims: AccessTokenClaims): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const [key] = jwt.secrets;
  return new SignJWT({ sid: claims.session.id, sat: claims.session.startedAt })
    .setProtectedHeader({ alg: JWT_ALGORITHM, typ: 'JWT', kid: jwt.currentKid })
    .setSubject(claims.userId)
    .setIssuer(JWT_ISSUER)
    .setAudience(EXPORT_TICKET_AUDIENCE)
    .setIssuedAt(now)
    .setExpirationTime(Math.min(now + EXPORT_TICKET_TTL_SECONDS, Math.floor(jwt.sessionEnd(claims.session) / 1000)))
    .setJti(randomUUID())
    .sign(key as Uint8Array);
}

/** The session a ticket was issued in; a 401 for anything but a valid, unexpired ticket. */
export async function verifyExportTicket(jwt: JwtService, ticket: string): Promise<AccessTokenClaims> {
  const [current] = jwt.secrets;
  try {
    const { payload, protectedHeader } = await jwtVerify(
      ticket,
      (header: JWTHeaderParameters) => {
        // Only the current secret signs tickets; a ticket outlives no rotation by more than a minute.
        if (header.kid !== jwt.currentKid || current === undefined) throw new joseErrors.JWSSignatureVerificationFailed();
        return current;
      },
      { algorithms: [JWT_ALGORITHM], issuer: JWT_ISSUER, audience: EXPORT_TICKET_AUDIENCE, requiredClaims: ['sub', 'exp', 'iat', 'sid', 'sat'] },
    );
    return {
      userId: payload.sub as string,
      kid: protectedHeader.kid ?? '',
      expiresAt: (payload.exp as number) * 1000,
      tokenId: payload.jti as string,
      session: { id: payload.sid as string, startedAt: payload.sat as number },
    };
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_JWT_EXPIRED') throw Errors.downloadLinkExpired();
    throw Errors.downloadLinkInvalid();
  }
}
