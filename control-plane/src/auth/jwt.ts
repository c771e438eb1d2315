import { createHash, hkdfSync, randomUUID } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT, type JWTHeaderParameters } from 'jose';
import { ConfigError, Errors, type ControlPlaneConfig } from '@gateway/shared';

/**
 * Management API access tokens: HS256 JWTs that live one hour. The header's `kid` names the secret
 * that signed the token, so JWT_SECRET can be rotated: the new secret signs, former secrets listed in
 * JWT_PREVIOUS_SECRETS still verify the tokens they signed until those expire. Verification pins the
 * algorithm, so neither `alg: none` nor a switch to another algorithm gets a token through.
 *
 * Every token belongs to a session: a password sign-in starts one (claims `sid`, a random id, and
 * `sat`, the sign-in time in Unix ms, since `iat` has only whole seconds) and each refresh copies
 * both forward. That is what lets a sign-out end a token and every refresh of it, a password change
 * end every session begun before it, and a session end at SESSION_MAX_AGE_HOURS: no token's `exp`
 * goes past the session's end.
 */
export const TOKEN_TTL_SECONDS = 3600;
export const DEFAULT_SESSION_MAX_AGE_MS = 24 * 3600 * 1000;
export const JWT_ALGORITHM = 'HS256';
export const JWT_ISSUER = 'model-gateway/control-plane';
export const JWT_AUDIENCE = 'model-gateway/management-api';
/**
 * The dashboard's refresh token (an httpOnly cookie, see refresh-cookie.ts) is a JWT of the same
 * session with its own audience, so neither kind of token is accepted where the other is expected.
 */
export const REFRESH_AUDIENCE = 'model-gateway/session-refresh';
/** HS256 wants a key at least as long as its output (RFC 7518 §3.2). */
export const MIN_SECRET_BYTES = 32;

export interface Session {
  /** Random id shared by the sign-in's token and all its refreshes. */
  id: string;
  /** Unix ms of the password sign-in that began the session. */
  startedAt: number;
}

export interface AccessTokenClaims {
  /** The user's id. Nothing else about the user rides in the token: roles are read fresh on every request. */
  userId: string;
  kid: string;
  /** Unix ms. */
  expiresAt: number;
  /** The token's own id (`jti`). */
  tokenId: string;
  session: Session;
}

export interface IssuedRefreshToken {
  token: string;
  /** Its `jti`: what session_refresh_tokens compares to tell a current token from a used one. */
  tokenId: string;
  /** Seconds until the session ends, which is also when the token expires. */
  maxAgeSeconds: number;
}

export interface IssuedToken {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
}

/** A short, stable, non-reversible name of a secret: the first 16 hex digits of its SHA-256. */
export function keyIdOf(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex').slice(0, 16);
}

export class JwtService {
  private readonly signingKey: Uint8Array;
  readonly currentKid: string;
  private readonly verifyKeys: Map<string, Uint8Array>;

  readonly sessionMaxAgeMs: number;

  constructor(secret: string, previousSecrets: readonly string[] = [], options: { sessionMaxAgeMs?: number } = {}) {
    this.sessionMaxAgeMs = options.sessionMaxAgeMs ?? DEFAULT_SESSION_MAX_AGE_MS;
    this.signingKey = new TextEncoder().encode(secret);
    this.currentKid = keyIdOf(secret);
    this.verifyKeys = new Map([[this.currentKid, this.signingKey]]);
    for (const old of previousSecrets) {
      const kid = keyIdOf(old);
      if (!this.verifyKeys.has(kid)) this.verifyKeys.set(kid, new TextEncoder().encode(old));
    }
  }

  /** A key for another purpose (`label`) derived from the current secret with HKDF, so no second secret is needed. */
  deriveKey(label: string): Uint8Array {
    return new Uint8Array(hkdfSync('sha256', this.signingKey, new Uint8Array(0), label, 32));
  }

  /** Secrets that verify, current first: also the keys list cursors are authenticated with. */
  get secrets(): Uint8Array[] {
    return [...this.verifyKeys.values()];
  }

  /** The instant (Unix ms) after which no token of the session is valid and none is issued. */
  sessionEnd(session: Session): number {
    return session.startedAt + this.sessionMaxAgeMs;
  }

  /**
   * A token for `session` (a new session begun now without one): an hour, or less when the session
   * ends sooner. A session already over gets 401 UNAUTHORIZED instead.
   */
  async issue(userId: string, session: Session = startSession()): Promise<IssuedToken> {
    const now = Math.floor(Date.now() / 1000);
    const exp = Math.min(now + TOKEN_TTL_SECONDS, Math.floor(this.sessionEnd(session) / 1000));
    if (exp <= now) throw Errors.sessionTooOld();
    const token = await new SignJWT({ sid: session.id, sat: session.startedAt })
      .setProtectedHeader({ alg: JWT_ALGORITHM, typ: 'JWT', kid: this.currentKid })
      .setSubject(userId)
      .setIssuer(JWT_ISSUER)
      .setAudience(JWT_AUDIENCE)
      .setIssuedAt(now)
      .setExpirationTime(exp)
      .setJti(randomUUID())
      .sign(this.signingKey);
    return { access_token: token, token_type: 'Bearer', expires_in: exp - now };
  }

  /**
   * A refresh token for `session`: it lives as long as the session, and only trades for access
   * tokens (its audience is REFRESH_AUDIENCE), so the cookie it rides in is never a bearer.
   */
  async issueRefresh(userId: string, session: Session): Promise<IssuedRefreshToken> {
    const now = Math.floor(Date.now() / 1000);
    const exp = Math.floor(this.sessionEnd(session) / 1000);
    if (exp <= now) throw Errors.sessionTooOld();
    const tokenId = randomUUID();
    const token = await new SignJWT({ sid: session.id, sat: session.startedAt })
      .setProtectedHeader({ alg: JWT_ALGORITHM, typ: 'JWT', kid: this.currentKid })
      .setSubject(userId)
      .setIssuer(JWT_ISSUER)
      .setAudience(REFRESH_AUDIENCE)
      .setIssuedAt(now)
      .setExpirationTime(exp)
      .setJti(tokenId)
      .sign(this.signingKey);
    return { token, tokenId, maxAgeSeconds: exp - now };
  }

  /** The claims of a valid, unexpired access token; anything else is a 401 whose message says no more than needed. */
  async verify(token: string): Promise<AccessTokenClaims> {
    return this.verifyFor(token, JWT_AUDIENCE, 'access token');
  }

  /** The claims of a valid, unexpired refresh token (the dashboard's cookie). */
  async verifyRefresh(token: string): Promise<AccessTokenClaims> {
    return this.verifyFor(token, REFRESH_AUDIENCE, 'session cookie');
  }

  private async verifyFor(token: string, audience: string, what: string): Promise<AccessTokenClaims> {
    let kid = '';
    try {
      const { payload } = await jwtVerify(
        token,
        (header: JWTHeaderParameters) => {
          kid = header.kid ?? '';
          const key = this.verifyKeys.get(kid);
          // Same error class as a bad signature: an unknown kid is not worth a different answer.
          if (key === undefined) throw new joseErrors.JWSSignatureVerificationFailed();
          return key;
        },
        { algorithms: [JWT_ALGORITHM], issuer: JWT_ISSUER, audience, requiredClaims: ['sub', 'exp', 'iat'] },
      );
      const tokenId = typeof payload.jti === 'string' ? payload.jti : `${payload.sub}:${payload.iat}`;
      // Tokens made before sessions existed are each their own session, begun when they were issued.
      const session: Session = {
        id: typeof payload.sid === 'string' ? payload.sid : tokenId,
        startedAt: Number.isSafeInteger(payload.sat) ? (payload.sat as number) : (payload.iat as number) * 1000,
      };
      return { userId: payload.sub as string, kid, expiresAt: (payload.exp as number) * 1000, tokenId, session };
    } catch (err) {
      if ((err as { code?: string }).code === 'ERR_JWT_EXPIRED') throw Errors.tokenExpired(what);
      throw Errors.tokenInvalid(what);
    }
  }
}

/** A session begun by a password sign-in at `startedAt` (Unix ms). */
export function startSession(startedAt: number = Date.now()): Session {
  return { id: randomUUID(), startedAt };
}

/**
 * The service the configuration asks for; `secret` is JWT_SECRET, or the one jwt-secret-file.ts
 * made when it is unset. The secret itself is never logged.
 */
export function jwtServiceFromConfig(
  config: Pick<ControlPlaneConfig, 'jwtPreviousSecrets'> & Partial<Pick<ControlPlaneConfig, 'sessionMaxAgeHours'>>,
  secret: string,
): JwtService {
  const options = config.sessionMaxAgeHours === undefined ? {} : { sessionMaxAgeMs: config.sessionMaxAgeHours * 3600 * 1000 };
  for (const old of config.jwtPreviousSecrets) {
    if (Buffer.byteLength(old, 'utf8') < MIN_SECRET_BYTES) {
      throw new ConfigError(`every JWT_PREVIOUS_SECRETS entry must be at least ${MIN_SECRET_BYTES} bytes`);
    }
  }
  if (Buffer.byteLength(secret, 'utf8') < MIN_SECRET_BYTES) {
    throw new ConfigError(`JWT_SECRET must be at least ${MIN_SECRET_BYTES} bytes`);
  }
  return new JwtService(secret, config.jwtPreviousSecrets, options);
}
