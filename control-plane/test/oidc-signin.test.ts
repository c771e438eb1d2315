import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdmin } from '../src/account-recovery.js';
import { startControlPlane, type ControlPlane } from '../src/control-plane.js';
import { TEST_REDIS_URL } from '../../test-support/databases.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startHarness, type Harness } from './harness.js';
import { startTestProvider, type TestProvider } from './oidc-provider.js';

/**
 * Single sign-on against a real OpenID provider (oidc-provider): the browser's round trip is played
 * by fetch with a cookie jar, following each redirect by hand so every hop can be looked at. The
 * callback must begin the same session a password sign-in does (the refresh cookie), create the
 * account on the first sign-in with the right role, and refuse other domains, disabled accounts,
 * a flow from another browser and a tampered state, each audited.
 */
let idp: TestProvider;
let h: Harness;
const callbackUrl = () => `${h.base}/v1/signins/oidc/callback`;

beforeAll(async () => {
  idp = await startTestProvider(() => [callbackUrl()]);
  h = await startHarness('oidc', {
    env: {
      OIDC_ISSUER: idp.issuer,
      OIDC_CLIENT_ID: idp.clientId,
      OIDC_CLIENT_SECRET: idp.clientSecret,
      OIDC_ALLOWED_DOMAINS: 'example.test, Corp.example',
      OIDC_ADMIN_GROUPS: 'gateway-admins',
    },
  });
});
afterAll(async () => {
  await h?.close();
  await idp?.close();
});

/** A browser: cookies per host:port (enough here, where nothing depends on paths), redirects by hand. */
class Browser {
  private readonly jars = new Map<string, Map<string, string>>();
  /** Every URL visited, in order. */
  readonly visited: string[] = [];

  async get(url: string): Promise<Response> {
    this.visited.push(url);
    const target = new URL(url);
    const jar = this.jars.get(target.host) ?? new Map<string, string>();
    const cookie = [...jar].map(([n, v]) => `${n}=${v}`).join('; ');
    const res = await fetch(url, { redirect: 'manual', headers: cookie === '' ? {} : { cookie } });
    for (const header of res.headers.getSetCookie()) {
      const [pair, ...attributes] = header.split(';').map((p) => p.trim());
      const eq = (pair as string).indexOf('=');
      const name = (pair as string).slice(0, eq);
      const value = (pair as string).slice(eq + 1);
      if (value === '' || attributes.some((a) => /^max-age=0$/i.test(a) || /^expires=Thu, 01 Jan 1970/i.test(a))) jar.delete(name);
      else jar.set(name, value);
    }
    this.jars.set(target.host, jar);
    return res;
  }

  /** Follows redirects until an answer that is not one, or until `stopAt` matches the next URL. */
  async follow(url: string, stopAt?: (next: URL) => boolean): Promise<{ res: Response; url: string }> {
    let current = url;
    for (let hop = 0; hop < 20; hop++) {
      const res = await this.get(current);
      const location = res.headers.get('location');
      if (res.status < 300 || res.status >= 400 || location === null) return { res, url: current };
      const next = new URL(location, current);
      if (stopAt?.(next)) return { res, url: next.href };
      current = next.href;
    }
    throw new Error('too many redirects');
  }

  cookie(host: string, name: string): string | undefined {
    return this.jars.get(host)?.get(name);
  }
}

/** Why the sign-in was refused, as the callback left it for the sign-in page (a short-lived cookie); null if it was not. */
function ssoError(browser: Browser): string | null {
  const value = browser.cookie(new URL(h.base).host, 'gateway_sso_error');
  return value === undefined ? null : decodeURIComponent(value);
}

/** The same, from one answer of the callback. */
function ssoErrorOf(res: Response): string | null {
  const set = res.headers.getSetCookie().find((c) => c.startsWith('gateway_sso_error='));
  return set === undefined ? null : decodeURIComponent((set.split(';')[0] as string).slice('gateway_sso_error='.length));
}

/** The whole round trip; returns where the browser landed on the gateway after the callback. */
async function ssoSignin(browser: Browser): Promise<URL> {
  const { url } = await browser.follow(`${h.base}/v1/signins/oidc`, (next) => next.origin === h.base && next.pathname === '/');
  return new URL(url);
}

async function refreshWithCookie(browser: Browser): Promise<{ status: number; token: string | null }> {
  const cookie = browser.cookie(new URL(h.base).host, 'gateway_session');
  if (cookie === undefined) return { status: 0, token: null };
  const res = await h.api('POST', '/v1/signins', { body: { grant_type: 'refresh' }, headers: { cookie: `gateway_session=${cookie}`, 'x-requested-with': 'test' } });
  return { status: res.status, token: res.status === 200 ? (res.body.access_token as string) : null };
}

async function auditTypes(since: number): Promise<{ type: string; outcome: string; actor: string | null }[]> {
  return h.sql<{ type: string; outcome: string; actor: string | null }[]>`
    select type, outcome, actor from audit_events where ts >= ${since} and type like any (array['signin.%', 'user.%']) order by ts, id`;
}

const email = (local: string, domain = 'example.test') => `${local}-${randomBytes(3).toString('hex')}@${domain}`;

describe('single sign-on', () => {
  it('tells the sign-in page it is there', async () => {
    const res = await h.api('GET', '/v1/signins');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ password: true, sso: true });
  });

  it('starts the authorization code flow with PKCE, state and nonce, the flow kept in an httpOnly cookie', async () => {
    const res = await fetch(`${h.base}/v1/signins/oidc`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location') as string);
    expect(location.origin).toBe(idp.issuer);
    const q = location.searchParams;
    expect(q.get('response_type')).toBe('code');
    expect(q.get('client_id')).toBe(idp.clientId);
    expect(q.get('redirect_uri')).toBe(callbackUrl());
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(q.get('state')).toMatch(/^[\w-]{20,}$/);
    expect(q.get('nonce')).toMatch(/^[\w-]{20,}$/);
    expect(q.get('scope')?.split(' ')).toEqual(expect.arrayContaining(['openid', 'email']));
    const flow = res.headers.getSetCookie().find((c) => c.startsWith('gateway_oidc_flow='));
    expect(flow).toMatch(/HttpOnly/i);
    expect(flow).toMatch(/SameSite=Lax/i);
    expect(flow).toMatch(/Path=\/v1\/signins\/oidc/);
    // Encrypted: neither the verifier nor the state can be read from it.
    expect(flow).not.toContain(q.get('state') as string);
  });

  it('creates a member account on the first sign-in and begins the same session as a password sign-in', async () => {
    const since = Date.now();
    const person = email('ada');
    idp.signInAs({ sub: `sub-${person}`, email: person });
    const browser = new Browser();
    const landed = await ssoSignin(browser);
    expect(landed.pathname).toBe('/');
    expect(landed.search).toBe('');
    expect(ssoError(browser)).toBeNull();
    // The browser went through the provider and back.
    expect(browser.visited.some((u) => u.startsWith(idp.issuer))).toBe(true);
    expect(browser.visited.some((u) => u.startsWith(callbackUrl()))).toBe(true);

    const { status, token } = await refreshWithCookie(browser);
    expect(status).toBe(200);
    const me = await h.api('GET', '/v1/users/me', { token });
    expect(me.body).toMatchObject({ email: person, role: 'member', disabled: false });
    const events = await auditTypes(since);
    expect(events).toEqual([
      { type: 'user.created', outcome: 'success', actor: me.body.id },
      { type: 'signin.succeeded', outcome: 'success', actor: me.body.id },
      { type: 'signin.refreshed', outcome: 'success', actor: me.body.id },
    ]);
    // The account's creation names it, as every management event names what it acted on.
    const [creation] = await h.sql<{ target_type: string; target_id: string }[]>`
      select target_type, target_id from audit_events where ts >= ${since} and type = 'user.created'`;
    expect(creation).toEqual({ target_type: 'user', target_id: me.body.id });
    // The account has no password: the password grant cannot get in with anything.
    const guess = await h.api('POST', '/v1/signins', { body: { grant_type: 'password', email: person, password: '!single-sign-on' } });
    expect(guess.status).toBe(401);

    // A second sign-in finds the same account instead of making another.
    const again = new Browser();
    await ssoSignin(again);
    const second = await refreshWithCookie(again);
    expect((await h.api('GET', '/v1/users/me', { token: second.token })).body.id).toBe(me.body.id);
    const rows = await h.sql`select id from users where lower(email) = lower(${person})`;
    expect(rows).toHaveLength(1);
  });

  it('makes members of an admin group account admins, in an allowed domain of any case', async () => {
    const person = email('grace', 'corp.EXAMPLE');
    idp.signInAs({ sub: `sub-${person}`, email: person, groups: ['staff', 'gateway-admins'] });
    const browser = new Browser();
    await ssoSignin(browser);
    const { token } = await refreshWithCookie(browser);
    const me = await h.api('GET', '/v1/users/me', { token });
    expect(me.body).toMatchObject({ email: person, role: 'admin' });
    expect((await h.api('GET', '/v1/users', { token })).status).toBe(200);
  });

  it('signs an existing password account in through single sign-on, keeping its role', async () => {
    idp.signInAs({ sub: 'sub-admin', email: ADMIN_EMAIL.toUpperCase() });
    const browser = new Browser();
    await ssoSignin(browser);
    const { token } = await refreshWithCookie(browser);
    const me = await h.api('GET', '/v1/users/me', { token });
    expect(me.body).toMatchObject({ id: h.adminId, role: 'admin' });
  });

  it('refuses an email outside the allowed domains, and creates no account', async () => {
    const since = Date.now();
    const person = email('mallory', 'elsewhere.test');
    idp.signInAs({ sub: `sub-${person}`, email: person, groups: ['gateway-admins'] });
    const browser = new Browser();
    const landed = await ssoSignin(browser);
    expect(landed.pathname).toBe('/');
    expect(ssoError(browser)).toMatch(/may not sign in here.*example\.test, corp\.example/);
    expect(browser.cookie(new URL(h.base).host, 'gateway_session')).toBeUndefined();
    expect(await h.sql`select id from users where email = ${person}`).toHaveLength(0);
    expect(await auditTypes(since)).toEqual([{ type: 'signin.failed', outcome: 'policy_blocked', actor: null }]);
  });

  it('refuses an email the provider has not verified', async () => {
    const person = email('unverified');
    idp.signInAs({ sub: `sub-${person}`, email: person, email_verified: false });
    const browser = new Browser();
    await ssoSignin(browser);
    expect(ssoError(browser)).toMatch(/has not verified/);
    expect(await h.sql`select id from users where email = ${person}`).toHaveLength(0);
  });

  it('refuses a disabled account', async () => {
    const user = await h.createUser();
    expect((await h.api('PATCH', `/v1/users/${user.id}`, { token: h.adminToken, body: { disabled: true } })).status).toBe(200);
    const since = Date.now();
    idp.signInAs({ sub: `sub-${user.email}`, email: user.email });
    const browser = new Browser();
    await ssoSignin(browser);
    expect(ssoError(browser)).toMatch(/disabled/);
    expect(browser.cookie(new URL(h.base).host, 'gateway_session')).toBeUndefined();
    expect(await auditTypes(since)).toEqual([{ type: 'signin.failed', outcome: 'auth_failed', actor: user.id }]);
  });

  it('refuses a callback in a browser that did not start the flow, or with another state', async () => {
    const person = email('eve');
    idp.signInAs({ sub: `sub-${person}`, email: person });
    // The victim's browser goes to the provider; the callback URL is then opened in another browser.
    const victim = new Browser();
    const { url: callback } = await victim.follow(`${h.base}/v1/signins/oidc`, (next) => next.href.startsWith(callbackUrl()));
    const other = new Browser();
    const elsewhere = await other.get(callback);
    expect(ssoErrorOf(elsewhere)).toMatch(/another browser/);

    // The right browser, but a state that is not the one its flow cookie holds.
    const tampered = new URL(callback);
    tampered.searchParams.set('state', 'x'.repeat(43));
    const res = await victim.get(tampered.href);
    expect(ssoErrorOf(res)).toMatch(/could not be verified/);
    // The flow cookie is spent: the genuine callback after that is refused too, and no session began.
    const late = await victim.get(callback);
    expect(ssoErrorOf(late)).toMatch(/another browser/);
    expect(victim.cookie(new URL(h.base).host, 'gateway_session')).toBeUndefined();
    expect(await h.sql`select id from users where email = ${person}`).toHaveLength(0);
  });

  it("passes on the provider's refusal by its code", async () => {
    idp.refuseNext('access_denied');
    const browser = new Browser();
    await ssoSignin(browser);
    expect(ssoError(browser)).toMatch(/refused the sign-in \(access_denied\)/);
  });
});

describe('PASSWORD_SIGNIN=false', () => {
  let cp: ControlPlane;
  let base: string;
  beforeAll(async () => {
    cp = await startControlPlane({
      DATABASE_URL: h.db.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_PREFIX: h.prefix,
      CONTROL_PORT: '0',
      CONTROL_METRICS_PORT: '0',
      JWT_SECRET: h.jwtSecret,
      DEMO_SEED: 'false',
      LOG_LEVEL: 'silent',
      PASSWORD_SIGNIN: 'false',
      OIDC_ISSUER: idp.issuer,
      OIDC_CLIENT_ID: idp.clientId,
      OIDC_CLIENT_SECRET: idp.clientSecret,
    });
    base = `http://127.0.0.1:${cp.port}`;
  });
  afterAll(async () => cp?.close());

  const signin = (email: string, password: string) =>
    fetch(`${base}/v1/signins`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ grant_type: 'password', email, password }) });

  it('refuses the password grant, but not to a break-glass account of `npm run admin`', async () => {
    expect(await (await fetch(`${base}/v1/signins`)).json()).toEqual({ password: false, sso: true });
    const refused = await signin(ADMIN_EMAIL, ADMIN_PASSWORD);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/single sign-on/);
    // A wrong password still reads as a wrong password.
    expect((await signin(ADMIN_EMAIL, 'not the password at all')).status).toBe(401);

    const breakGlass = `break-glass-${randomBytes(3).toString('hex')}@example.test`;
    const password = `bg-${randomBytes(12).toString('hex')}`;
    await createAdmin(cp.ctx.sql, breakGlass, password);
    expect((await signin(breakGlass, password)).status).toBe(200);
  });
});
