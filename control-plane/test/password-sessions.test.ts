import { randomBytes, scryptSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './harness.js';

/**
 * Password hashes at OWASP's current scrypt cost, older ones replaced at the next sign-in; the
 * dashboard's refresh cookie rotated on every use, a reused one ending the whole session.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness('pwsessions');
});
afterAll(async () => h?.close());

const signin = (email: string, password: string, extra: Record<string, unknown> = {}) =>
  h.api('POST', '/v1/signins', { body: { grant_type: 'password', email, password, ...extra } });

async function hashOf(id: string): Promise<string> {
  const [row] = await h.sql<{ password_hash: string }[]>`select password_hash from users where id = ${id}`;
  return row?.password_hash as string;
}

describe('password hashes', () => {
  it('are made at N = 2^17, r = 8, p = 1', async () => {
    const user = await h.createUser();
    expect(await hashOf(user.id)).toMatch(/^scrypt\$131072\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
  });

  it('made at an older cost still verify, and are replaced by one at the current cost at the next sign-in', async () => {
    const user = await h.createUser();
    // What earlier versions stored: N = 2^14.
    const salt = randomBytes(16);
    const old = `scrypt$16384$8$1$${salt.toString('base64url')}$${scryptSync(user.password, salt, 32, { N: 16384, r: 8, p: 1 }).toString('base64url')}`;
    await h.sql`update users set password_hash = ${old} where id = ${user.id}`;
    // A wrong password changes nothing.
    expect((await signin(user.email, 'not the password')).status).toBe(401);
    expect(await hashOf(user.id)).toBe(old);
    expect((await signin(user.email, user.password)).status).toBe(200);
    const upgraded = await hashOf(user.id);
    expect(upgraded).toMatch(/^scrypt\$131072\$8\$1\$/);
    expect((await signin(user.email, user.password)).status).toBe(200);
    expect(await hashOf(user.id)).toBe(upgraded);
  });
});

function sessionCookieOf(headers: Headers): string | null {
  const set = headers.getSetCookie().find((c) => c.startsWith('gateway_session='));
  if (set === undefined) return null;
  return set.slice('gateway_session='.length).split(';')[0] as string;
}

const refresh = (cookie: string) =>
  h.api('POST', '/v1/signins', { body: { grant_type: 'refresh' }, headers: { cookie: `gateway_session=${cookie}`, 'x-requested-with': 'test' } });

describe('the refresh cookie', () => {
  it('is replaced on every use; a replaced one used again ends the session for every copy', async () => {
    const user = await h.createUser();
    const first = await signin(user.email, user.password, { refresh_cookie: true });
    const a = sessionCookieOf(first.headers) as string;
    expect(a).toBeTruthy();

    const r1 = await refresh(a);
    expect(r1.status, r1.text).toBe(200);
    const b = sessionCookieOf(r1.headers) as string;
    expect(b).toBeTruthy();
    expect(b).not.toBe(a);
    expect(r1.headers.getSetCookie().find((c) => c.startsWith('gateway_session='))).toMatch(/HttpOnly.*SameSite=Strict|SameSite=Strict.*HttpOnly/i);

    const r2 = await refresh(b);
    expect(r2.status).toBe(200);
    const c = sessionCookieOf(r2.headers) as string;
    const token = r2.body.access_token as string;
    expect((await h.api('GET', '/v1/users/me', { token })).status).toBe(200);

    // The first cookie again: whoever holds it, two parties hold this session.
    const since = Date.now();
    const replay = await refresh(a);
    expect(replay.status).toBe(401);
    expect(replay.body.error.message).toMatch(/already used/);
    expect(sessionCookieOf(replay.headers)).toBe('');
    // The current cookie and the access tokens of the session are over too.
    expect((await refresh(c)).status).toBe(401);
    const after = await h.api('GET', '/v1/users/me', { token });
    expect(after.status).toBe(401);
    expect(after.body.error.message).toMatch(/signed out/);
    const events = await h.sql`select type, outcome, actor from audit_events where ts >= ${since} and type like 'signin.%' order by ts, id`;
    expect(events[0]).toEqual({ type: 'signin.refresh_reused', outcome: 'auth_failed', actor: user.id });

    // Other sessions of the account are untouched.
    expect((await h.api('GET', '/v1/users/me', { token: user.token })).status).toBe(200);
  });

  it('of two refreshes racing with the same cookie, lets one through and ends the session', async () => {
    const user = await h.createUser();
    const cookie = sessionCookieOf((await signin(user.email, user.password, { refresh_cookie: true })).headers) as string;
    const statuses = (await Promise.all([refresh(cookie), refresh(cookie)])).map((r) => r.status).sort();
    expect(statuses).toEqual([200, 401]);
  });
});
