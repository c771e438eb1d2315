import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdmin, linkSso, RecoveryError, unlinkSso } from '../src/account-recovery.js';
import { startControlPlane, type ControlPlane } from '../src/control-plane.js';
import { TEST_REDIS_URL } from '../../test-support/databases.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startHarness, type Harness } from './harness.js';
import { startTestProvider, type TestProvider } from './oidc-provider.js';

/**
 * Single sign-on against a real OpenID provider (oidc-provider): the browser's round trip is played
 * by fetch with a cookie jar, following each redirect by hand so every hop can be looked at. The
 * callback must begin the same session a password sign-in does (the refresh cookie), create the
 * account on the first sign-in with the right role, and refuse other domains, disabled accounts,
 * a flow from another browser and a tampered state, each audited. Accounts are bound to the
 * provider's issuer and subject: an email the provider has not verified never reaches an existing
 * account (the "nOAuth" takeover), a bound account is not taken by another subject with the same
 * email, and a bound subject reaches its account whatever email it carries later.
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

/** Who the browser is signed in as after its round trip, or null when the sign-in was refused. */
async function whoAmI(browser: Browser): Promise<{ id: string; email: string; role: string } | null> {
  const { token } = await refreshWithCookie(browser);
  if (token === null) return null;
  return (await h.api('GET', '/v1/users/me', { token })).body;
}

async function signInAs(identity: Parameters<TestProvider['signInAs']>[0]): Promise<{ browser: Browser; me: { id: string; email: string; role: string } | null }> {
  idp.signInAs(identity);
  const browser = new Browser();
  await ssoSignin(browser);
  return { browser, me: await whoAmI(browser) };
}

async function bindingsOf(userId: string): Promise<{ issuer: string; subject: string; email_at_link: string; last_email: string }[]> {
  return h.sql`select issuer, subject, email_at_link, last_email from user_identities where user_id = ${userId} order by created_at`;
}

async function refusalsSince(since: number): Promise<{ type: string; outcome: string; actor: string | null; target_id: string | null }[]> {
  return h.sql`select type, outcome, actor, target_id from audit_events where ts >= ${since} and type like 'signin.%' order by ts, id`;
}

const sub = (name: string) => `${name}-${randomBytes(4).toString('hex')}`;

describe('single sign-on binds accounts to the issuer and subject, not the email', () => {
  it('does not let an ID token with the admin email and no email_verified sign in as the admin (nOAuth)', async () => {
    const since = Date.now();
    // The claims ride in the ID token itself, as Entra ID sends them, with no email_verified.
    const { browser, me } = await signInAs({ sub: sub('intruder'), email: ADMIN_EMAIL, email_verified: null, claimsInIdToken: true });
    expect(me).toBeNull();
    expect(ssoError(browser)).toMatch(/has not verified admin@example\.test.*an account of that email exists/);
    expect(browser.cookie(new URL(h.base).host, 'gateway_session')).toBeUndefined();
    expect(await refusalsSince(since)).toEqual([{ type: 'signin.failed', outcome: 'auth_failed', actor: null, target_id: h.adminId }]);
  });

  it('does not link a password account to an email the provider has not verified, sent in userinfo or said false', async () => {
    const user = await h.createUser();
    for (const email_verified of [null, false, 'false'] as const) {
      const intruder = sub('intruder');
      const { browser, me } = await signInAs({ sub: intruder, email: user.email.toUpperCase(), email_verified });
      expect(me).toBeNull();
      expect(ssoError(browser)).toMatch(/has not verified/);
      expect(await h.sql`select 1 from user_identities where subject = ${intruder}`).toHaveLength(0);
    }
    expect(await bindingsOf(user.id)).toEqual([]);
    // The account itself is untouched: its password still signs it in.
    expect((await h.api('POST', '/v1/signins', { body: { grant_type: 'password', email: user.email, password: user.password } })).status).toBe(200);
  });

  it('links an existing account to the first identity with that verified email, once', async () => {
    const user = await h.createUser();
    const subject = sub('owner');
    const first = await signInAs({ sub: subject, email: user.email, email_verified: true });
    expect(first.me).toMatchObject({ id: user.id, email: user.email, role: 'member' });
    expect(await bindingsOf(user.id)).toEqual([{ issuer: idp.issuer, subject, email_at_link: user.email, last_email: user.email }]);

    const again = await signInAs({ sub: subject, email: user.email, email_verified: true });
    expect(again.me?.id).toBe(user.id);
    expect(await bindingsOf(user.id)).toHaveLength(1);
    // Linking takes nothing away: the password still signs in too.
    expect((await h.api('POST', '/v1/signins', { body: { grant_type: 'password', email: user.email, password: user.password } })).status).toBe(200);
  });

  it('accepts the string "true" some providers send for email_verified (AWS Cognito, JumpCloud)', async () => {
    const user = await h.createUser();
    const { me } = await signInAs({ sub: sub('cognito'), email: user.email, email_verified: 'true' });
    expect(me?.id).toBe(user.id);
    expect(await bindingsOf(user.id)).toHaveLength(1);
  });

  it('refuses another subject of the same issuer with the same verified email once the account is bound', async () => {
    const user = await h.createUser();
    const owner = sub('owner');
    expect((await signInAs({ sub: owner, email: user.email })).me?.id).toBe(user.id);

    const since = Date.now();
    const other = sub('other');
    const { browser, me } = await signInAs({ sub: other, email: user.email, email_verified: true });
    expect(me).toBeNull();
    expect(ssoError(browser)).toMatch(/linked to another identity/);
    expect(await refusalsSince(since)).toEqual([{ type: 'signin.failed', outcome: 'auth_failed', actor: null, target_id: user.id }]);
    expect((await bindingsOf(user.id)).map((b) => b.subject)).toEqual([owner]);
    expect(await h.sql`select 1 from user_identities where subject = ${other}`).toHaveLength(0);
    // The owner still gets in.
    expect((await signInAs({ sub: owner, email: user.email })).me?.id).toBe(user.id);
  });

  it('signs a bound subject in to its own account after its email changed, even to another account\'s email', async () => {
    const person = email('lin');
    const subject = sub('lin');
    const created = await signInAs({ sub: subject, email: person });
    const id = created.me?.id as string;
    expect(created.me).toMatchObject({ email: person, role: 'member' });

    // Renamed at the provider, and not verified there yet.
    const renamed = email('lin-renamed');
    const after = await signInAs({ sub: subject, email: renamed, email_verified: null });
    expect(after.me).toMatchObject({ id, email: person });
    expect(await bindingsOf(id)).toEqual([{ issuer: idp.issuer, subject, email_at_link: person, last_email: renamed }]);

    // An email the provider lets its users set to anything finds no other account either.
    const other = await h.createUser('admin');
    const spoofed = await signInAs({ sub: subject, email: other.email, email_verified: true, claimsInIdToken: true });
    expect(spoofed.me).toMatchObject({ id, email: person, role: 'member' });
    expect(await bindingsOf(other.id)).toEqual([]);
    expect((await bindingsOf(id)).map((b) => b.last_email)).toEqual([other.email]);
    expect(await h.sql`select id from users where email = ${renamed}`).toHaveLength(0);
  });

  it('creates a member account bound to a new identity', async () => {
    const since = Date.now();
    const person = email('new');
    const subject = sub('new');
    // No email_verified: no account of that email exists to take over.
    const { me } = await signInAs({ sub: subject, email: person, email_verified: null, claimsInIdToken: true });
    expect(me).toMatchObject({ email: person, role: 'member' });
    expect(await bindingsOf(me?.id as string)).toEqual([{ issuer: idp.issuer, subject, email_at_link: person, last_email: person }]);
    expect((await auditTypes(since)).map((e) => e.type)).toEqual(['user.created', 'signin.succeeded', 'signin.refreshed']);
  });

  it('makes one account of several first sign-ins at once, and links an account to one of two subjects at once', async () => {
    const person = email('twice');
    const subject = sub('twice');
    idp.signInAs({ sub: subject, email: person });
    const tabs = [new Browser(), new Browser(), new Browser(), new Browser()];
    await Promise.all(tabs.map((tab) => ssoSignin(tab)));
    const accounts = await Promise.all(tabs.map((tab) => whoAmI(tab)));
    const rows = await h.sql<{ id: string }[]>`select id from users where lower(email) = lower(${person})`;
    expect(rows).toHaveLength(1);
    const id = (rows[0] as { id: string }).id;
    expect(accounts.map((me) => me?.id)).toEqual(tabs.map(() => id));
    expect(await bindingsOf(id)).toHaveLength(1);

    const user = await h.createUser();
    // Up to the callback one after the other (the provider's login step signs in whoever
    // signInAs named last), then both callbacks at once.
    const flows: { browser: Browser; callback: string }[] = [];
    for (const racer of [sub('racer'), sub('racer')]) {
      idp.signInAs({ sub: racer, email: user.email });
      const browser = new Browser();
      const { url } = await browser.follow(`${h.base}/v1/signins/oidc`, (next) => next.href.startsWith(callbackUrl()));
      flows.push({ browser, callback: url });
    }
    const results = await Promise.all(flows.map(async ({ browser, callback }) => (await browser.follow(callback), whoAmI(browser))));
    expect(results.filter((me) => me?.id === user.id)).toHaveLength(1);
    expect(results.filter((me) => me === null)).toHaveLength(1);
    expect(await bindingsOf(user.id)).toHaveLength(1);
  });

  it('links the account again, to the next verified identity, after `npm run admin -- unlink-sso`', async () => {
    const user = await h.createUser();
    const old = sub('old');
    const first = await signInAs({ sub: old, email: user.email });
    expect(first.me?.id).toBe(user.id);
    // The person's identity at the provider was replaced: a new subject, the same email.
    const replaced = sub('replaced');
    expect((await signInAs({ sub: replaced, email: user.email })).me).toBeNull();

    const since = Date.now();
    expect(await unlinkSso(h.cp.ctx.sql, user.email.toUpperCase())).toEqual({ unlinked: 1 });
    expect(await unlinkSso(h.cp.ctx.sql, user.email)).toEqual({ unlinked: 0 });
    expect(await h.sql`select type, actor, target_id, user_agent from audit_events where ts >= ${since}`).toEqual([
      { type: 'user.updated', actor: null, target_id: user.id, user_agent: 'local-admin (npm run admin -- unlink-sso)' },
    ]);
    // The sessions the old identity began are over.
    expect((await refreshWithCookie(first.browser)).status).toBe(401);
    expect((await h.api('GET', '/v1/users/me', { token: user.token })).status).toBe(401);

    // An unverified email still does not link it; the verified new subject does, and the old one is out.
    expect((await signInAs({ sub: sub('intruder'), email: user.email, email_verified: null })).me).toBeNull();
    expect((await signInAs({ sub: replaced, email: user.email })).me?.id).toBe(user.id);
    expect((await bindingsOf(user.id)).map((b) => b.subject)).toEqual([replaced]);
    expect((await signInAs({ sub: old, email: user.email })).me).toBeNull();
  });

  it('binds an account to an identity the operator names with `npm run admin -- link-sso`, for a provider without email_verified', async () => {
    const user = await h.createUser();
    const subject = sub('entra');
    const refused = await signInAs({ sub: subject, email: user.email, email_verified: null, claimsInIdToken: true });
    expect(refused.me).toBeNull();

    const identity = { issuer: idp.issuer, subject };
    expect(await linkSso(h.cp.ctx.sql, user.email, identity)).toEqual({ linked: true });
    expect(await linkSso(h.cp.ctx.sql, user.email, identity)).toEqual({ linked: false });
    expect((await signInAs({ sub: subject, email: user.email, email_verified: null, claimsInIdToken: true })).me?.id).toBe(user.id);

    // Neither the identity nor the account is bound twice.
    const other = await h.createUser();
    await expect(linkSso(h.cp.ctx.sql, other.email, identity)).rejects.toThrow(new RecoveryError(`that identity is linked to the account ${user.email}; run unlink-sso on it first`));
    await expect(linkSso(h.cp.ctx.sql, user.email, { issuer: idp.issuer, subject: sub('second') })).rejects.toThrow(/is linked to another identity of .*run unlink-sso on it first/);
    await expect(linkSso(h.cp.ctx.sql, 'nobody@example.test', identity)).rejects.toThrow(/no account has the email/);
    expect(await bindingsOf(other.id)).toEqual([]);
    expect((await bindingsOf(user.id)).map((b) => b.subject)).toEqual([subject]);
  });

  it('still refuses a bound account once it is disabled', async () => {
    const person = email('gone');
    const subject = sub('gone');
    const { me } = await signInAs({ sub: subject, email: person });
    expect((await h.api('PATCH', `/v1/users/${me?.id}`, { token: h.adminToken, body: { disabled: true } })).status).toBe(200);
    const again = await signInAs({ sub: subject, email: person });
    expect(again.me).toBeNull();
    expect(ssoError(again.browser)).toMatch(/disabled/);
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
