import { mkdtemp, readdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { base64url, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { ConfigError, GatewayError } from '@gateway/shared';
import { jwtSecretOf } from './jwt-secret-file.js';
import { JWT_AUDIENCE, JWT_ISSUER, JwtService, jwtServiceFromConfig, keyIdOf, startSession, TOKEN_TTL_SECONDS } from './jwt.js';

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

  it('puts every token in a session that refreshes carry forward, each token with its own id', async () => {
    const jwt = new JwtService(SECRET);
    const signedIn = await jwt.verify((await jwt.issue('user-1')).access_token);
    expect(signedIn.session.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Math.abs(signedIn.session.startedAt - Date.now())).toBeLessThan(60_000);
    // sat keeps the milliseconds iat would round away.
    const payload = JSON.parse(Buffer.from((await jwt.issue('user-1', signedIn.session)).access_token.split('.')[1] as string, 'base64url').toString());
    expect(payload).toMatchObject({ sid: signedIn.session.id, sat: signedIn.session.startedAt, jti: expect.any(String) });
    const refreshed = await jwt.verify((await jwt.issue('user-1', signedIn.session)).access_token);
    expect(refreshed.session).toEqual(signedIn.session);
    expect(refreshed.tokenId).not.toBe(signedIn.tokenId);
    // A token from before sessions existed is a session of its own, begun when it was issued.
    const legacyToken = await craft();
    const legacy = await jwt.verify(legacyToken);
    const { iat } = JSON.parse(Buffer.from(legacyToken.split('.')[1] as string, 'base64url').toString());
    expect(legacy.session.startedAt).toBe(iat * 1000);
    expect(legacy.session.id).toBe(legacy.tokenId);
  });

  it('never lets a token outlive its session, and issues none once the session is over', async () => {
    const jwt = new JwtService(SECRET, [], { sessionMaxAgeMs: 2 * 3600 * 1000 });
    const young = await jwt.issue('user-1', startSession(Date.now() - 60_000));
    expect(young.expires_in).toBe(TOKEN_TTL_SECONDS);
    const old = await jwt.issue('user-1', startSession(Date.now() - 90 * 60_000));
    expect(old.expires_in).toBeLessThanOrEqual(30 * 60);
    expect(old.expires_in).toBeGreaterThan(29 * 60);
    expect((await jwt.verify(old.access_token)).expiresAt).toBeLessThanOrEqual(Date.now() + 30 * 60_000);
    const over = await refusal(jwt.issue('user-1', startSession(Date.now() - 2 * 3600 * 1000 - 1000)));
    expect(over.message).toMatch(/maximum age/);
    expect(jwtServiceFromConfig({ jwtPreviousSecrets: [], sessionMaxAgeHours: 5 }, SECRET).sessionMaxAgeMs).toBe(5 * 3600 * 1000);
  });

  it('wants secrets of at least 32 bytes', () => {
    expect(() => jwtServiceFromConfig({ jwtPreviousSecrets: [] }, 'short')).toThrow(ConfigError);
    expect(() => jwtServiceFromConfig({ jwtPreviousSecrets: ['short'] }, SECRET)).toThrow(/JWT_PREVIOUS_SECRETS/);
  });

  it('in production without JWT_SECRET warns, without the secret, that it has to make one up', async () => {
    const { lines, log } = captureLog();
    const dir = await mkdtemp(join(tmpdir(), 'jwt-secret-'));
    const secret = await jwtSecretOf({ jwtSecret: undefined, production: true, jwtSecretFile: join(dir, 'jwt-secret') }, log);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ level: 40, msg: expect.stringContaining('JWT_SECRET is not set') });
    expect(lines[0]).not.toContain(secret);
    expect(lines[0]).not.toContain(keyIdOf(secret));
    expect(await readdir(dir)).toEqual([]);
    expect(await jwtSecretOf({ jwtSecret: SECRET, production: true, jwtSecretFile: join(dir, 'jwt-secret') }, log)).toBe(SECRET);
  });

  it('in development generates the secret once and keeps it in a 0600 file, so a restart keeps every session', async () => {
    const { lines, log } = captureLog();
    const dir = await mkdtemp(join(tmpdir(), 'jwt-secret-'));
    const file = join(dir, 'state', 'jwt-secret');
    const first = await jwtSecretOf({ jwtSecret: undefined, production: false, jwtSecretFile: file }, log);
    const token = await jwtServiceFromConfig({ jwtPreviousSecrets: [] }, first).issue('user-1');
    // A restart: the same file, so the same secret, so the token still verifies.
    const second = await jwtSecretOf({ jwtSecret: undefined, production: false, jwtSecretFile: file }, log);
    expect(second).toBe(first);
    expect((await jwtServiceFromConfig({ jwtPreviousSecrets: [] }, second).verify(token.access_token)).userId).toBe('user-1');
    expect(Buffer.byteLength(first)).toBeGreaterThanOrEqual(32);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(lines.join('\n')).not.toContain(first);
  });
});
