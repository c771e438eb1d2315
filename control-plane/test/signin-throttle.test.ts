import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEFAULT_THROTTLE_LIMITS } from '../src/auth/signin-throttle.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startHarness, type Harness } from './harness.js';

/** Its own file (so its own Redis prefix): every request here comes from 127.0.0.1 and counts. */
let h: Harness;
beforeAll(async () => {
  h = await startHarness('throttle');
});
afterAll(async () => h?.close());

/** Every attempt costs a password hash at scrypt's production cost: these tests make dozens. */
const SLOW = { timeout: 300_000 };

const signin = (email: string, password: string) => h.api('POST', '/v1/signins', { body: { grant_type: 'password', email, password } });

it('locks an account after repeated failures, right password included, and says when to retry', SLOW, async () => {
  const user = await h.createUser();
  // The harness signed the user in once; a success leaves no count behind.
  for (let i = 0; i < DEFAULT_THROTTLE_LIMITS.perEmail; i++) expect((await signin(user.email, 'wrong password')).status).toBe(401);
  const locked = await signin(user.email.toUpperCase(), user.password);
  expect(locked.status).toBe(429);
  expect(locked.body.error.code).toBe('RATE_LIMITED');
  const retryAfter = Number(locked.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(DEFAULT_THROTTLE_LIMITS.windowSeconds);

  // Other accounts are unaffected.
  expect((await signin(ADMIN_EMAIL, ADMIN_PASSWORD)).status).toBe(200);
  const [row] = await h.sql`select outcome, status, error_code, actor from audit_events where type = 'signin.failed' and status = 429`;
  expect(row).toEqual({ outcome: 'policy_blocked', status: 429, error_code: 'RATE_LIMITED', actor: user.id });
});

it('a success clears the count of failures before it', SLOW, async () => {
  const user = await h.createUser();
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < DEFAULT_THROTTLE_LIMITS.perEmail - 1; i++) expect((await signin(user.email, 'wrong')).status).toBe(401);
    expect((await signin(user.email, user.password)).status).toBe(200);
  }
});

it('counts by the account the lookup finds, however its email is spelt', SLOW, async () => {
  // PostgreSQL's lower() (the lookup) turns the dotted capital I into "i"; JavaScript's
  // toLowerCase() turns it into "i" plus a combining dot, so counting by the JavaScript spelling
  // gave each spelling its own five guesses at the same account.
  const email = `tim-${Date.now().toString(36)}@example.test`;
  const password = 'a long enough password for tim';
  expect((await h.api('POST', '/v1/users', { token: h.adminToken, body: { email, password, role: 'member' } })).status).toBe(201);
  const spellings = [email, email.toUpperCase(), email.replace('tim', 'TİM'), email.replace('tim', 'tİm'), email.replace('tim', 'Tim')];
  const found = await h.sql<{ n: number }[]>`select count(*)::int as n from users where lower(email) = lower(${spellings[2] as string})`;
  expect(found[0]?.n).toBe(1);
  for (const spelling of spellings.slice(0, DEFAULT_THROTTLE_LIMITS.perEmail)) expect((await signin(spelling, 'wrong password')).status).toBeGreaterThanOrEqual(400);
  // Each spelling that reaches the account has used one of its five: the right password waits too.
  const locked = await signin(email.replace('tim', 'tİm'), password);
  expect(locked.status, locked.text).toBe(429);
});

it('throttles one address spraying many accounts, known or not', SLOW, async () => {
  const keys = await h.redis.keys(`${h.prefix}{signin}:fail:ip:*`);
  const used = keys.length === 0 ? 0 : Number(await h.redis.get(keys[0] as string));
  let status = 0;
  let attempts = 0;
  // Every attempt uses a fresh email, so only the per-address counter can stop them.
  while (attempts < DEFAULT_THROTTLE_LIMITS.perIp - used) {
    status = (await signin(`spray-${attempts}@example.test`, 'guess')).status;
    expect(status).toBe(401);
    attempts++;
  }
  const blocked = await signin('spray-last@example.test', 'guess');
  expect(blocked.status).toBe(429);
  expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
  // Redis keys carry no email address.
  expect((await h.redis.keys(`${h.prefix}{signin}:*`)).join(' ')).not.toMatch(/@/);
});
