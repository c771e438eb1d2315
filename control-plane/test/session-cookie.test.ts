import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startHarness, type Harness } from './harness.js';

/**
 * The dashboard's session cookie: set by a password sign-in that asks for it, with the flags that
 * keep it from scripts and other sites; traded for access tokens by the refresh grant (with the
 * X-Requested-With header only); cleared and ended by sign-out; ended by a password change.
 * Also: the control plane logs one line per request.
 */
let h: Harness;
let behindProxy: Harness;
beforeAll(async () => {
  h = await startHarness('sesscookie', { captureLogs: true });
  behindProxy = await startHarness('sesscookieproxy', { db: h.db, env: { TRUST_PROXY: '127.0.0.1, ::1' } });
});
afterAll(async () => {
  await behindProxy?.close();
  await h?.close();
});

interface Cookie {
  name: string;
  value: string;
  attributes: Map<string, string>;
}

function parseSetCookie(header: string): Cookie {
  const [pair, ...rest] = header.split(';').map((part) => part.trim());
  const eq = (pair as string).indexOf('=');
  const attributes = new Map<string, string>();
  for (const attribute of rest) {
    const at = attribute.indexOf('=');
    attributes.set((at === -1 ? attribute : attribute.slice(0, at)).toLowerCase(), at === -1 ? '' : attribute.slice(at + 1));
  }
  return { name: (pair as string).slice(0, eq), value: (pair as string).slice(eq + 1), attributes };
}

function sessionCookie(headers: Headers): Cookie | null {
  const found = headers.getSetCookie().map(parseSetCookie).filter((c) => c.name === 'gateway_session');
  expect(found.length).toBeLessThanOrEqual(1);
  return found[0] ?? null;
}

async function cookieSignin(harness: Harness, email: string, password: string, headers: Record<string, string> = {}) {
  const res = await harness.api('POST', '/v1/signins', { body: { grant_type: 'password', email, password, refresh_cookie: true }, headers });
  expect(res.status, res.text).toBe(200);
  const cookie = sessionCookie(res.headers);
  expect(cookie).not.toBeNull();
  return { token: res.body.access_token as string, cookie: cookie as Cookie };
}

function cookieRefresh(harness: Harness, value: string, headers: Record<string, string> = { 'x-requested-with': 'gateway-dashboard' }) {
  return harness.api('POST', '/v1/signins', { body: { grant_type: 'refresh' }, headers: { cookie: `gateway_session=${value}`, ...headers } });
}

describe('the session cookie', () => {
  it('is set only when asked for, httpOnly, SameSite=Strict, scoped to the sign-in route, for the session length', async () => {
    const plain = await h.api('POST', '/v1/signins', { body: { grant_type: 'password', email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    expect(plain.status).toBe(200);
    expect(plain.headers.getSetCookie()).toEqual([]);

    const { cookie } = await cookieSignin(h, ADMIN_EMAIL, ADMIN_PASSWORD);
    expect(cookie.attributes.get('path')).toBe('/v1/signins');
    expect(cookie.attributes.has('httponly')).toBe(true);
    expect(cookie.attributes.get('samesite')).toBe('Strict');
    // Plain HTTP (development): not Secure, or the browser would never send it back.
    expect(cookie.attributes.has('secure')).toBe(false);
    // The default SESSION_MAX_AGE_HOURS of 24, less the seconds the sign-in took.
    const maxAge = Number(cookie.attributes.get('max-age'));
    expect(maxAge).toBeGreaterThan(24 * 3600 - 60);
    expect(maxAge).toBeLessThanOrEqual(24 * 3600);
  });

  it('is Secure when a trusted proxy says the request came over HTTPS, and only then', async () => {
    const viaTls = await cookieSignin(behindProxy, ADMIN_EMAIL, ADMIN_PASSWORD, { 'x-forwarded-proto': 'https' });
    expect(viaTls.cookie.attributes.has('secure')).toBe(true);
    const claimed = await cookieSignin(h, ADMIN_EMAIL, ADMIN_PASSWORD, { 'x-forwarded-proto': 'https' });
    expect(claimed.cookie.attributes.has('secure')).toBe(false);
  });

  it('trades for a working access token of the same session, with the custom header only', async () => {
    const user = await h.createUser();
    const { cookie } = await cookieSignin(h, user.email, user.password);
    const refreshed = await cookieRefresh(h, cookie.value);
    expect(refreshed.status, refreshed.text).toBe(200);
    const me = await h.api('GET', '/v1/users/me', { token: refreshed.body.access_token });
    expect(me.body.email).toBe(user.email);

    // A cross-site form cannot add a header: without it the cookie mints nothing.
    const bare = await cookieRefresh(h, cookie.value, {});
    expect(bare.status).toBe(403);
    expect(bare.body.error.code).toBe('FORBIDDEN');
    expect(bare.body.error.message).toContain('X-Requested-With');
  });

  it('is no bearer, and an access token is no session cookie', async () => {
    const user = await h.createUser();
    const { token, cookie } = await cookieSignin(h, user.email, user.password);
    const asBearer = await h.api('GET', '/v1/users/me', { token: cookie.value });
    expect(asBearer.status).toBe(401);
    const asCookie = await cookieRefresh(h, token);
    expect(asCookie.status).toBe(401);
    expect(asCookie.body.error.message).toBe('The session cookie is invalid.');
    // The refused cookie is dropped from the browser.
    expect(sessionCookie(asCookie.headers)?.attributes.get('max-age')).toBe('0');
  });

  it('is cleared by sign-out, and the session it carried is over', async () => {
    const user = await h.createUser();
    const { token, cookie } = await cookieSignin(h, user.email, user.password);
    const out = await h.api('POST', '/v1/signouts', { token });
    expect(out.status).toBe(204);
    const cleared = sessionCookie(out.headers);
    expect(cleared?.value).toBe('');
    expect(cleared?.attributes.get('max-age')).toBe('0');
    expect(cleared?.attributes.get('path')).toBe('/v1/signins');
    // A copy of the cookie kept elsewhere mints nothing either.
    const again = await cookieRefresh(h, cookie.value);
    expect(again.status).toBe(401);
    expect(again.body.error.message).toBe('This session was signed out; sign in again.');
  });

  it('ends with a password change, like every session begun before it', async () => {
    const user = await h.createUser();
    const { token, cookie } = await cookieSignin(h, user.email, user.password);
    const changed = await h.api('POST', '/v1/users/me/password', { token, body: { current_password: user.password, new_password: 'a brand new passphrase' } });
    expect(changed.status).toBe(204);
    const refused = await cookieRefresh(h, cookie.value);
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toContain('revoked');
  });

  it('leaves the bearer refresh grant as it was, and the bearer wins over a cookie', async () => {
    const user = await h.createUser();
    const { token } = await cookieSignin(h, user.email, user.password);
    const byBearer = await h.api('POST', '/v1/signins', { token, body: { grant_type: 'refresh' }, headers: { cookie: 'gateway_session=not-a-token' } });
    expect(byBearer.status, byBearer.text).toBe(200);
    expect(byBearer.headers.getSetCookie()).toEqual([]);
    const withFlag = await h.api('POST', '/v1/signins', { token, body: { grant_type: 'refresh', refresh_cookie: true } });
    expect(withFlag.status).toBe(400);
  });

  it('answers a refresh with neither bearer nor cookie with 401, and audits nothing (the dashboard asks on every load)', async () => {
    const before = await h.sql`SELECT count(*)::int AS n FROM audit_events WHERE type = 'signin.failed'`;
    const res = await h.api('POST', '/v1/signins', { body: { grant_type: 'refresh' }, headers: { 'x-requested-with': 'gateway-dashboard' } });
    expect(res.status).toBe(401);
    expect(res.body.error.message).toContain('No session to refresh');
    const after = await h.sql`SELECT count(*)::int AS n FROM audit_events WHERE type = 'signin.failed'`;
    expect(after[0]?.n).toBe(before[0]?.n);
  });

  it('never shows up in the logs', async () => {
    const { cookie } = await cookieSignin(h, ADMIN_EMAIL, ADMIN_PASSWORD);
    await cookieRefresh(h, cookie.value);
    expect(h.logs.join('')).not.toContain(cookie.value.split('.')[2]);
  });
});

describe('request logs', () => {
  it('has one JSON line per request, when it is answered, with method, path, status and time', async () => {
    const res = await h.api('GET', '/v1/users/me?x=1', { token: h.adminToken });
    const requestId = res.headers.get('x-request-id');
    const lines = h.logs.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.reqId === requestId);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ msg: 'request completed', method: 'GET', url: '/v1/users/me?x=1', status: 200 });
    expect(typeof lines[0]?.ms).toBe('number');
    expect(h.logs.join('')).not.toContain('incoming request');
  });
});
