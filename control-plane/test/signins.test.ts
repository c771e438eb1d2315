import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JWT_AUDIENCE, JWT_ISSUER, keyIdOf } from '../src/auth/jwt.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, randomSecret, startHarness, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness('signins', { captureLogs: true });
});
afterAll(async () => h?.close());

const headerOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[0] as string, 'base64url').toString());

async function craft(secret: string, options: { sub: string; exp?: number; alg?: string }): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: options.alg ?? 'HS256', kid: keyIdOf(secret) })
    .setSubject(options.sub)
    .setIssuer(JWT_ISSUER)
    .setAudience(JWT_AUDIENCE)
    .setIssuedAt(now - 7200)
    .setExpirationTime(options.exp ?? now + 600)
    .sign(new TextEncoder().encode(secret));
}

describe('password grant', () => {
  it('trades an email and password for a one-hour bearer token', async () => {
    const res = await h.api('POST', '/v1/signins', { body: { grant_type: 'password', email: ADMIN_EMAIL.toUpperCase(), password: ADMIN_PASSWORD } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 3600 });
    expect(headerOf(res.body.access_token)).toMatchObject({ alg: 'HS256', kid: keyIdOf(h.jwtSecret) });
    const me = await h.api('GET', '/v1/users/me', { token: res.body.access_token });
    expect(me.body).toMatchObject({ id: h.adminId, email: ADMIN_EMAIL, role: 'admin' });
  });

  it('answers a wrong password and an unknown email alike', async () => {
    const wrong = await h.api('POST', '/v1/signins', { body: { grant_type: 'password', email: ADMIN_EMAIL, password: 'not it' } });
    const unknown = await h.api('POST', '/v1/signins', { body: { grant_type: 'password', email: 'nobody@example.test', password: 'not it' } });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(unknown.body).toEqual(wrong.body);
    expect(wrong.body.error.code).toBe('UNAUTHORIZED');
  });

  it('validates the body', async () => {
    const cases = [
      [{ grant_type: 'password', email: ADMIN_EMAIL }, 'body.password is required'],
      [{ grant_type: 'magic' }, 'body.grant_type must be equal to one of the allowed values'],
      [{ email: ADMIN_EMAIL, password: 'x' }, 'body.grant_type is required'],
      [{ grant_type: 'password', email: ADMIN_EMAIL, password: 5 }, 'body.password must be string'],
      [{ grant_type: 'password', email: ADMIN_EMAIL, password: 'x', remember: true }, 'body.remember is not a known field'],
    ] as const;
    for (const [body, message] of cases) {
      const res = await h.api('POST', '/v1/signins', { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_REQUEST', message });
    }
    expect((await h.api('POST', '/v1/signins', { rawBody: '{"grant_type":' })).body.error.code).toBe('INVALID_REQUEST');
    expect((await h.api('POST', '/v1/signins', { rawBody: 'grant_type=password', headers: { 'content-type': 'text/plain' } })).status).toBe(415);
  });

  it('audits successes and failures without the password', async () => {
    const rows = await h.sql`select type, outcome, status, error_code, actor from audit_events where type like 'signin.%' order by ts, id`;
    expect(rows.filter((r) => r.type === 'signin.succeeded').every((r) => r.actor === h.adminId && r.outcome === 'success')).toBe(true);
    const failed = rows.filter((r) => r.type === 'signin.failed');
    expect(failed.map((r) => [r.outcome, r.status, r.error_code])).toContainEqual(['auth_failed', 401, 'UNAUTHORIZED']);
    // A failure for an existing account names it; one for an unknown email cannot.
    expect(failed.map((r) => r.actor)).toEqual(expect.arrayContaining([h.adminId, null]));
    const everything = JSON.stringify(await h.sql`select * from audit_events`);
    expect(everything).not.toContain(ADMIN_PASSWORD);
    expect(everything).not.toContain('not it');
  });
});

describe('refresh grant', () => {
  it('trades the current token for a new one', async () => {
    const res = await h.api('POST', '/v1/signins', { token: h.adminToken, body: { grant_type: 'refresh' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 3600 });
    expect(res.body.access_token).not.toBe(h.adminToken);
    expect((await h.api('GET', '/v1/users/me', { token: res.body.access_token })).status).toBe(200);
    const [row] = await h.sql`select actor, outcome from audit_events where type = 'signin.refreshed'`;
    expect(row).toEqual({ actor: h.adminId, outcome: 'success' });
  });

  it('refuses an expired token, no token, and credentials in the body', async () => {
    const expired = await craft(h.jwtSecret, { sub: h.adminId, exp: Math.floor(Date.now() / 1000) - 1 });
    const refused = await h.api('POST', '/v1/signins', { token: expired, body: { grant_type: 'refresh' } });
    expect(refused.status).toBe(401);
    expect(refused.body.error).toMatchObject({ code: 'UNAUTHORIZED', message: expect.stringMatching(/expired/) });
    expect((await h.api('POST', '/v1/signins', { body: { grant_type: 'refresh' } })).status).toBe(401);
    const mixed = await h.api('POST', '/v1/signins', { token: h.adminToken, body: { grant_type: 'refresh', password: 'x' } });
    expect(mixed.status).toBe(400);
  });
});

describe('bearer tokens on the API', () => {
  it('are required on every /v1 route but sign-in, before the body is even looked at', async () => {
    for (const [method, path] of [
      ['GET', '/v1/projects'],
      ['POST', '/v1/projects'],
      ['GET', '/v1/usage?limit=99999'],
      ['GET', '/v1/audit'],
      ['POST', '/v1/users'],
      ['DELETE', '/v1/projects/00000000-0000-4000-8000-000000000000/keys/00000000-0000-4000-8000-000000000000'],
    ]) {
      const res = await h.api(method as string, path as string, { rawBody: method === 'POST' ? 'not json' : undefined });
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(res.body.error.code).toBe('UNAUTHORIZED');
    }
    for (const path of ['/healthz', '/readyz', '/openapi.json']) expect((await h.api('GET', path)).status, path).toBe(200);
    // Metrics are on their own port (CONTROL_METRICS_PORT), not on the management API's.
    expect((await h.api('GET', '/metrics')).status).toBe(404);
    const metrics = await fetch(`http://127.0.0.1:${h.cp.metricsPort}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('control_plane_requests_total');
  });

  it('refuses expired, tampered, unsigned, re-algorithmed and foreign tokens', async () => {
    const now = Math.floor(Date.now() / 1000);
    const [header, payload, signature] = h.adminToken.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const tampered = `${header}.${Buffer.from(JSON.stringify({ ...claims, exp: now + 99_999 })).toString('base64url')}.${signature}`;
    const noneHeader = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT', kid: keyIdOf(h.jwtSecret) })).toString('base64url');
    const bad = {
      expired: await craft(h.jwtSecret, { sub: h.adminId, exp: now - 1 }),
      tampered,
      'alg none': `${noneHeader}.${payload}.`,
      'alg HS512': await craft(h.jwtSecret, { sub: h.adminId, alg: 'HS512' }),
      'foreign secret': await craft(randomSecret(), { sub: h.adminId }),
      'unknown user': await craft(h.jwtSecret, { sub: '00000000-0000-4000-8000-000000000000' }),
      garbage: 'garbage',
    };
    for (const [what, token] of Object.entries(bad)) {
      const res = await h.api('GET', '/v1/projects', { token });
      expect(res.status, what).toBe(401);
      expect(res.body.error.code, what).toBe('UNAUTHORIZED');
    }
    const basic = await h.api('GET', '/v1/projects', { headers: { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` } });
    expect(basic.status).toBe(401);
  });

  it('never shows up in the logs, nor does a password', () => {
    const logs = h.logs.join('');
    expect(logs).toContain('request completed');
    expect(logs).not.toContain(h.adminToken);
    expect(logs).not.toContain(h.adminToken.split('.')[2]);
    expect(logs).not.toContain(ADMIN_PASSWORD);
    expect(logs).not.toContain(h.jwtSecret);
  });
});

describe('secret rotation', () => {
  it('keeps tokens of the previous secret valid and signs new ones with the new kid', async () => {
    const newSecret = randomSecret();
    const rotated = await startHarness('signinsrot', { db: h.db, env: { JWT_SECRET: newSecret, JWT_PREVIOUS_SECRETS: `${randomSecret()}, ${h.jwtSecret}` } });
    try {
      // h.adminToken was signed by the old secret, which is now only a previous one.
      expect(headerOf(h.adminToken).kid).toBe(keyIdOf(h.jwtSecret));
      expect((await rotated.api('GET', '/v1/users/me', { token: h.adminToken })).status).toBe(200);
      expect(headerOf(rotated.adminToken).kid).toBe(keyIdOf(newSecret));
      const refreshed = await rotated.api('POST', '/v1/signins', { token: h.adminToken, body: { grant_type: 'refresh' } });
      expect(refreshed.status).toBe(200);
      expect(headerOf(refreshed.body.access_token).kid).toBe(keyIdOf(newSecret));
      // The old instance does not know the new secret: its tokens are foreign there.
      expect((await h.api('GET', '/v1/users/me', { token: rotated.adminToken })).status).toBe(401);
    } finally {
      await rotated.close();
    }
  });
});
