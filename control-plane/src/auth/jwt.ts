import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT, type JWTHeaderParameters } from 'jose';
import type { Logger } from 'pino';
import { ConfigError, GatewayError, type ControlPlaneConfig } from '@gateway/shared';

/**
 * Management API access tokens: HS256 JWTs that live one hour. The header's `kid` names the secret
 * that signed the token, so JWT_SECRET can be rotated: the new secret signs, former secrets listed in
 * JWT_PREVIOUS_SECRETS still verify the tokens they signed until those expire. Verification pins the
 * algorithm, so neither `alg: none` nor a switch to another algorithm gets a token through.
 */
export const TOKEN_TTL_SECONDS = 3600;
export const JWT_ALGORITHM = 'HS256';
export const JWT_ISSUER = 'model-gateway/control-plane';
export const JWT_AUDIENCE = 'model-gateway/management-api';
/** HS256 wants a key at least as long as its output (RFC 7518 §3.2). */
export const MIN_SECRET_BYTES = 32;

export interface AccessTokenClaims {
  /** The user's id. Nothing else about the user rides in the token: roles are read fresh on every request. */
  userId: string;
  kid: string;
  expiresAt: number;
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

  constructor(secret: string, previousSecrets: readonly string[] = []) {
    this.signingKey = new TextEncoder().encode(secret);
    this.currentKid = keyIdOf(secret);
    this.verifyKeys = new Map([[this.currentKid, this.signingKey]]);
    for (const old of previousSecrets) {
      const kid = keyIdOf(old);
      if (!this.verifyKeys.has(kid)) this.verifyKeys.set(kid, new TextEncoder().encode(old));
    }
  }

  /** Secrets that verify, current first: also the keys list cursors are authenticated with. */
  get secrets(): Uint8Array[] {
    return [...this.verifyKeys.values()];
  }

  async issue(userId: string): Promise<IssuedToken> {
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: JWT_ALGORITHM, typ: 'JWT', kid: this.currentKid })
      .setSubject(userId)
      .setIssuer(JWT_ISSUER)
      .setAudience(JWT_AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(`${TOKEN_TTL_SECONDS}s`)
      .setJti(randomUUID())
      .sign(this.signingKey);
    return { access_token: token, token_type: 'Bearer', expires_in: TOKEN_TTL_SECONDS };
  }

  /** The claims of a valid, unexpired token; anything else is a 401 whose message says no more than needed. */
  async verify(token: string): Promise<AccessTokenClaims> {
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
        { algorithms: [JWT_ALGORITHM], issuer: JWT_ISSUER, audience: JWT_AUDIENCE, requiredClaims: ['sub', 'exp', 'iat'] },
      );
      return { userId: payload.sub as string, kid, expiresAt: (payload.exp as number) * 1000 };
    } catch (err) {
      if ((err as { code?: string }).code === 'ERR_JWT_EXPIRED') throw new GatewayError('UNAUTHORIZED', 'The access token has expired; sign in again.');
      throw new GatewayError('UNAUTHORIZED', 'The access token is invalid.');
    }
  }
}

/**
 * The service the configuration asks for. Without JWT_SECRET a random secret is made for this
 * process alone: fine for a laptop, wrong for anything else (tokens die with the process and other
 * replicas refuse them), hence the loud warning. The secret itself is never logged.
 */
export function jwtServiceFromConfig(config: Pick<ControlPlaneConfig, 'jwtSecret' | 'jwtPreviousSecrets'>, log: Logger): JwtService {
  for (const old of config.jwtPreviousSecrets) {
    if (Buffer.byteLength(old, 'utf8') < MIN_SECRET_BYTES) {
      throw new ConfigError(`every JWT_PREVIOUS_SECRETS entry must be at least ${MIN_SECRET_BYTES} bytes`);
    }
  }
  if (config.jwtSecret === undefined) {
    log.warn(
      'JWT_SECRET is not set: signing management tokens with a random development secret. Tokens will not survive a ' +
        `restart and other control-plane replicas will refuse them. Set JWT_SECRET (at least ${MIN_SECRET_BYTES} bytes) in production.`,
    );
    return new JwtService(randomBytes(48).toString('base64url'), config.jwtPreviousSecrets);
  }
  if (Buffer.byteLength(config.jwtSecret, 'utf8') < MIN_SECRET_BYTES) {
    throw new ConfigError(`JWT_SECRET must be at least ${MIN_SECRET_BYTES} bytes`);
  }
  return new JwtService(config.jwtSecret, config.jwtPreviousSecrets);
}
