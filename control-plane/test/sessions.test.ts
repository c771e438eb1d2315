import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisKeys } from '@gateway/shared';
import { DEFAULT_THROTTLE_LIMITS } from '../src/auth/signin-throttle.js';
import { JWT_AUDIENCE, JWT_ISSUER, keyIdOf } from '../src/auth/jwt.js';
import type { Db } from '../src/db/connect.js';
import { eventually } from '../../test-support/processes.js';
import { startPrivateRedis, type PrivateRedis } from '../../test-support/services.js';
import { startHarness, type Harness } from './harness.js';

/** Sessions end: password changes and resets, sign-outs, and the maximum age. */
let h: Harness;
beforeAll(async () => {
  h = await startHarness('sessions');
});
afterAll(async () => h?.close());

const HOUR = 3600 * 1000;
const me = (harness: Harness, token: string) => harness.api('GET', '/v1/users/me', { token });
const refresh = (harness: Harness, token: string) => harness.api('POST', '/v1/signins', { token, body: { grant_type: 'refresh' } });
const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString());
const changeOwn = (token: string, current: string, next: string) =>
  h.api('POST', '/v1/users/me/password', { token, body: { current_password: current, new_password: next } });

/** A token as the control plane would sign it, for a session begun at `startedAt` (Unix ms). */
async function tokenFor(userId: string, startedAt: number, sessionId: string = randomUUID()): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ sid: sessionId, sat: startedAt })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: keyIdOf(h.jwtSecret) })
    .setSubject(userId)
    .setIssuer(JWT_ISSUER)
    .setAudience(JWT_AUDIENCE)
    .setIssuedAt(now)
    .setExpirationTime(now + 600)
    .setJti(randomUUID())
    .sign(new TextEncoder().encode(h.jwtSecret));
}

describe('changing your own password', () => {
  it('ends every session begun before the change, refreshed tokens and the caller\'s own included', async () => {
    const user = await h.createUser();
    const other = await h.signin(user.email, user.password);
    const refreshed = (await refresh(h, other)).body.access_token as string;
    const res = await changeOwn(user.token, user.password, 'a brand new password');
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    for (const token of [user.token, other, refreshed]) {
      const refused = await me(h, token);
      expect(refused.status).toBe(401);
      expect(refused.body.error).toMatchObject({ code: 'UNAUTHORIZED', message: expect.stringMatching(/revoked/) });
      expect((await refresh(h, token)).status).toBe(401);
    }
    // A sign-in made once the change has answered works, and the old password is gone.
    const fresh = await h.signin(user.email, 'a brand new password');
    expect((await me(h, fresh)).status).toBe(200);
    expect((await refresh(h, fresh)).status).toBe(200);
    expect((await h.api('POST', '/v1/signins', { body: { grant_type: 'password', email: user.email, password: user.password } })).status).toBe(401);
    const events = await h.sql`select outcome, status from audit_events where type = 'password.changed' and actor = ${user.id}`;
    expect(events).toEqual([{ outcome: 'success', status: 204 }]);
  });

  it('compares to the millisecond: a session begun at the instant of the change is over, one a millisecond later is not', async () => {
    const user = await h.createUser();
    expect((await changeOwn(user.token, user.password, 'another long password')).status).toBe(204);
    const [row] = await h.sql<{ tokens_valid_after: Date }[]>`select tokens_valid_after from users where id = ${user.id}`;
    const instant = row!.tokens_valid_after.getTime();
    // The route answered only once its clock had passed the instant, so later sign-ins begin after it.
    expect(Date.now()).toBeGreaterThan(instant);
    expect((await me(h, await tokenFor(user.id, instant - 1))).status).toBe(401);
    expect((await me(h, await tokenFor(user.id, instant))).status).toBe(401);
    expect((await me(h, await tokenFor(user.id, instant + 1))).status).toBe(200);
  });

  it('wants the current password, counts wrong ones toward the sign-in throttle, and audits them', async () => {
    const user = await h.createUser();
    for (let i = 0; i < DEFAULT_THROTTLE_LIMITS.perEmail; i++) {
      const wrong = await changeOwn(user.token, 'not my password', 'a brand new password');
      expect(wrong.status).toBe(403);
      expect(wrong.body.error).toMatchObject({ code: 'FORBIDDEN', param: 'current_password' });
    }
    const throttled = await changeOwn(user.token, user.password, 'a brand new password');
    expect(throttled.status).toBe(429);
    expect(throttled.body.error.code).toBe('RATE_LIMITED');
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
    // The same counter guards the sign-in of that account.
    expect((await h.api('POST', '/v1/signins', { body: { grant_type: 'password', email: user.email, password: user.password } })).status).toBe(429);
    // Nothing changed: the token still works.
    expect((await me(h, user.token)).status).toBe(200);
    const events = await h.sql<{ outcome: string }[]>`select outcome from audit_events where type = 'password.changed' and actor = ${user.id} order by ts, id`;
    expect(events.map((e) => e.outcome)).toEqual([...Array(DEFAULT_THROTTLE_LIMITS.perEmail).fill('auth_failed'), 'policy_blocked']);
    expect(JSON.stringify(await h.sql`select * from audit_events`)).not.toContain('not my password');
  });

  it('applies the password policy to the new password without counting an attempt', async () => {
    const user = await h.createUser();
    const short = await changeOwn(user.token, user.password, 'too short');
    expect(short.status).toBe(400);
    expect(short.body.error).toMatchObject({ code: 'INVALID_REQUEST', param: 'new_password' });
    const email = await changeOwn(user.token, user.password, user.email.toUpperCase());
    expect(email.status).toBe(400);
    expect(email.body.error.message).toMatch(/email/);
    for (let i = 0; i < DEFAULT_THROTTLE_LIMITS.perEmail + 1; i++) expect((await changeOwn(user.token, user.password, user.email)).status).toBe(400);
    expect((await me(h, user.token)).status).toBe(200);
    expect((await changeOwn(user.token, user.password, 'a policy-abiding password')).status).toBe(204);
  });
});

describe("an admin resetting someone's password", () => {
  it('ends every session of that account and leaves the admin signed in', async () => {
    const user = await h.createUser();
    const res = await h.api('POST', `/v1/users/${user.id}/password`, { token: h.adminToken, body: { new_password: 'set by the admin' } });
    expect(res.status).toBe(204);
    expect((await me(h, user.token)).status).toBe(401);
    expect((await refresh(h, user.token)).status).toBe(401);
    expect((await me(h, h.adminToken)).status).toBe(200);
    expect((await me(h, await h.signin(user.email, 'set by the admin'))).status).toBe(200);
    const [event] = await h.sql`select actor, outcome from audit_events where type = 'password.reset'`;
    expect(event).toEqual({ actor: h.adminId, outcome: 'success' });
  });

  it('is for account admins, on accounts that exist, with the policy applied to the target account', async () => {
    const user = await h.createUser();
    const member = await h.createUser();
    const forbidden = await h.api('POST', `/v1/users/${user.id}/password`, { token: member.token, body: { new_password: 'not allowed to set this' } });
    expect(forbidden.status).toBe(403);
    const [blocked] = await h.sql`select outcome from audit_events where type = 'password.reset' and actor = ${member.id}`;
    expect(blocked).toEqual({ outcome: 'policy_blocked' });
    const missing = await h.api('POST', '/v1/users/00000000-0000-4000-8000-000000000000/password', { token: h.adminToken, body: { new_password: 'for nobody at all' } });
    expect(missing.status).toBe(404);
    const own = await h.api('POST', `/v1/users/${user.id}/password`, { token: h.adminToken, body: { new_password: user.email } });
    expect(own.status).toBe(400);
    expect((await me(h, user.token)).status).toBe(200);
  });
});

describe('signing out', () => {
  it('ends the session of the token: it, its refreshes before and after, but no other session', async () => {
    const user = await h.createUser();
    const otherSession = await h.signin(user.email, user.password);
    const refreshedBefore = (await refresh(h, user.token)).body.access_token as string;
    const res = await h.api('POST', '/v1/signouts', { token: user.token });
    expect(res.status).toBe(204);
    for (const token of [user.token, refreshedBefore]) {
      const refused = await me(h, token);
      expect(refused.status).toBe(401);
      expect(refused.body.error.message).toMatch(/signed out/);
      expect((await refresh(h, token)).status).toBe(401);
    }
    expect((await h.api('POST', '/v1/signouts', { token: user.token })).status).toBe(401);
    expect((await me(h, otherSession)).status).toBe(200);

    const sessionId = claimsOf(user.token).sid as string;
    const ttl = await h.redis.pttl(new RedisKeys(h.prefix).sessionSignedOut(sessionId));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(24 * HOUR);
    const rows = await h.sql`select user_id from session_signouts where session_id = ${sessionId}`;
    expect(rows).toEqual([{ user_id: user.id }]);
    const [event] = await h.sql`select outcome, status from audit_events where type = 'signout' and actor = ${user.id}`;
    expect(event).toEqual({ outcome: 'success', status: 204 });
  });

  it('answers an anonymous sign-out with 401', async () => {
    expect((await h.api('POST', '/v1/signouts')).status).toBe(401);
  });
});

describe('the maximum session age', () => {
  it('defaults to 24 hours', () => {
    expect(h.cp.ctx.config.sessionMaxAgeHours).toBe(24);
    expect(h.cp.ctx.jwt.sessionMaxAgeMs).toBe(24 * HOUR);
  });

  it('refuses refresh, and the token, once the sign-in is older than it', async () => {
    const user = await h.createUser();
    const old = await tokenFor(user.id, Date.now() - 24 * HOUR - 1000);
    const failures = async () => (await h.sql`select 1 from audit_events where type = 'signin.failed' and outcome = 'auth_failed'`).length;
    const before = await failures();
    const refused = await refresh(h, old);
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toMatch(/maximum age/);
    expect(await failures()).toBe(before + 1);
    expect((await me(h, old)).status).toBe(401);
    // A token just inside the session still works.
    expect((await me(h, await tokenFor(user.id, Date.now() - 24 * HOUR + 60_000))).status).toBe(200);
  });

  it('refreshes a session near its end with a token that ends with it, keeping the session', async () => {
    const user = await h.createUser();
    const startedAt = Date.now() - 23.5 * HOUR;
    const sessionId = randomUUID();
    const res = await refresh(h, await tokenFor(user.id, startedAt, sessionId));
    expect(res.status).toBe(200);
    expect(res.body.expires_in).toBeLessThanOrEqual(1800);
    expect(res.body.expires_in).toBeGreaterThan(1700);
    const claims = claimsOf(res.body.access_token);
    expect(claims).toMatchObject({ sid: sessionId, sat: startedAt });
    expect(claims.exp * 1000).toBeLessThanOrEqual(startedAt + 24 * HOUR);
  });
});

describe('the cost of revocation', () => {
  it('adds no PostgreSQL query to a request: one row read, as before', async () => {
    const user = await h.createUser();
    const ctx = h.cp.ctx;
    const original = ctx.sql;
    let queries = 0;
    ctx.sql = new Proxy(original, {
      apply(target, thisArg, args) {
        // The invalidation log's once-a-second poll shares the client; it is no request's query.
        const text = Array.isArray(args[0]) ? (args[0] as string[]).join('?') : '';
        if (!text.includes('from invalidation_log')) queries++;
        return Reflect.apply(target as unknown as (...a: unknown[]) => unknown, thisArg, args);
      },
    }) as Db;
    try {
      expect((await me(h, user.token)).status).toBe(200);
      expect(queries).toBe(1);
      await h.api('POST', '/v1/signouts', { token: await h.signin(user.email, user.password) });
      queries = 0;
      expect((await me(h, user.token)).status).toBe(200);
      expect(queries).toBe(1);
    } finally {
      ctx.sql = original;
    }
  });
});

describe('sign-outs and Redis', () => {
  let redis: PrivateRedis;
  let p: Harness;
  beforeAll(async () => {
    redis = await startPrivateRedis();
    p = await startHarness('sessionsredis', { env: { REDIS_URL: redis.url } });
  });
  afterAll(async () => {
    await p?.close();
    await redis?.stop('SIGKILL');
  });

  const ready = (status: boolean) => eventually(() => (p.cp.ctx.redis.status === 'ready') === status, `redis ready = ${status}`);

  it('hold through a Redis restart that lost every key', async () => {
    const user = await p.createUser();
    const kept = await p.signin(user.email, user.password);
    expect((await p.api('POST', '/v1/signouts', { token: user.token })).status).toBe(204);
    await redis.restart();
    await ready(true);
    expect((await me(p, user.token)).status).toBe(401);
    expect((await me(p, kept)).status).toBe(200);
  });

  it('hold while Redis is down, and a sign-out then waits for it', async () => {
    const user = await p.createUser();
    const kept = await p.signin(user.email, user.password);
    expect((await p.api('POST', '/v1/signouts', { token: user.token })).status).toBe(204);
    await redis.stop('SIGKILL');
    try {
      await ready(false);
      expect((await me(p, user.token)).status).toBe(401);
      expect((await me(p, kept)).status).toBe(200);
      const unavailable = await p.api('POST', '/v1/signouts', { token: kept });
      expect(unavailable.status).toBe(503);
      expect(unavailable.body.error.code).toBe('UNAVAILABLE');
    } finally {
      await redis.start();
    }
    await ready(true);
    // The refused sign-out left nothing behind, and the one before still holds.
    expect((await me(p, kept)).status).toBe(200);
    expect((await me(p, user.token)).status).toBe(401);
  });
});
