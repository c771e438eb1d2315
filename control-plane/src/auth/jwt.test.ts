import { pino } from 'pino';
import { base64url, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { ConfigError, GatewayError } from '@gateway/shared';
import { JWT_AUDIENCE, JWT_ISSUER, JwtService, jwtServiceFromConfig, keyIdOf, TOKEN_TTL_SECONDS } from './jwt.js';

const SECRET = 'a-test-secret-that-is-long-enough-0001';
const OLD_SECRET = 'an-older-secret-that-is-long-enough-02';
const encode = (s: string) => new TextEncoder().encode(s);

/** A token as an attacker (or a clock) would make it, with every part chosen by the test. */
async function craft(options: { secret?: string; alg?: string; kid?: string; exp?: number; sub?: string } = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: options.alg ?? 'HS256', kid: options.kid ?? keyIdOf(options.secret ?? SECRET) })
    .setSubject(options.sub ?? 'user-1')
    .setIssuer(JWT_ISSUER)
    .setAudience(JWT_AUDIENCE)
    .setIssuedAt(now - 10)
    .setExpirationTime(options.exp ?? now + 600)
    .sign(encode(options.secret ?? SECRET));
}

async function refusal(promise: Promise<unknown>): Promise<GatewayError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(GatewayError);
  expect((err as GatewayError).code).toBe('UNAUTHORIZED');
  return err as GatewayError;
}

function captureLog() {
  const lines: string[] = [];
  return { lines, log: pino({ level: 'trace' }, { write: (l: string) => void lines.push(l) }) };
}

describe('access tokens', () => {
  it('issues an HS256 token for one hour whose kid names the secret', async () => {
    const jwt = new JwtService(SECRET);
    const issued = await jwt.issue('user-1');
    expect(issued).toMatchObject({ token_type: 'Bearer', expires_in: TOKEN_TTL_SECONDS });
    const header = JSON.parse(Buffer.from(issued.access_token.split('.')[0] as string, 'base64url').toString());
    expect(header).toEqual({ alg: 'HS256', typ: 'JWT', kid: keyIdOf(SECRET) });
    expect(keyIdOf(SECRET)).toMatch(/^[0-9a-f]{16}$/);
    expect(header.kid).not.toContain(SECRET.slice(0, 8));
    const claims = await jwt.verify(issued.access_token);
    expect(claims.userId).toBe('user-1');
    expect(claims.expiresAt - Date.now()).toBeGreaterThan((TOKEN_TTL_SECONDS - 60) * 1000);
  });

  it('refuses expired, tampered, unsigned, re-algorithmed and foreign tokens', async () => {
    const jwt = new JwtService(SECRET);
    const expired = await refusal(jwt.verify(await craft({ exp: Math.floor(Date.now() / 1000) - 5 })));
    expect(expired.message).toMatch(/expired/);

    const [h, p, s] = (await craft()).split('.') as [string, string, string];
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify({ ...payload, sub: 'someone-else' })).toString('base64url');
    await refusal(jwt.verify(`${h}.${forged}.${s}`));

    const noneHeader = base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT', kid: keyIdOf(SECRET) }));
    await refusal(jwt.verify(`${noneHeader}.${p}.`));
    await refusal(jwt.verify(`${noneHeader}.${p}`));

    await refusal(jwt.verify(await craft({ alg: 'HS512' })));
    // Signed by another secret, even when it claims the right kid.
    await refusal(jwt.verify(await craft({ secret: 'somebody-elses-secret-of-enough-length', kid: keyIdOf(SECRET) })));
    await refusal(jwt.verify(await craft({ secret: 'somebody-elses-secret-of-enough-length' })));
    await refusal(jwt.verify('not.a.jwt'));
  });

  it('verifies tokens of a previous secret after rotation and signs new ones with the new kid', async () => {
    const before = new JwtService(OLD_SECRET);
    const oldToken = (await before.issue('user-1')).access_token;
    const after = new JwtService(SECRET, [OLD_SECRET]);
    expect((await after.verify(oldToken)).kid).toBe(keyIdOf(OLD_SECRET));
    const fresh = (await after.issue('user-1')).access_token;
    expect((await after.verify(fresh)).kid).toBe(keyIdOf(SECRET));
    // Once the old secret is dropped from the list, its tokens stop working.
    await refusal(new JwtService(SECRET).verify(oldToken));
  });

  it('wants secrets of at least 32 bytes and warns, without the secret, when it has to make one up', () => {
    const { lines, log } = captureLog();
    expect(() => jwtServiceFromConfig({ jwtSecret: 'short', jwtPreviousSecrets: [] }, log)).toThrow(ConfigError);
    expect(() => jwtServiceFromConfig({ jwtSecret: SECRET, jwtPreviousSecrets: ['short'] }, log)).toThrow(/JWT_PREVIOUS_SECRETS/);
    expect(lines).toEqual([]);
    const dev = jwtServiceFromConfig({ jwtSecret: undefined, jwtPreviousSecrets: [] }, log);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ level: 40, msg: expect.stringContaining('JWT_SECRET is not set') });
    expect(dev.currentKid).toMatch(/^[0-9a-f]{16}$/);
    // The log line names no secret: the only secret-derived value it could hold is the kid, and it does not.
    expect(lines[0]).not.toContain(dev.currentKid);
  });
});
