import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_THROTTLE_LIMITS } from '../src/auth/signin-throttle.js';
import { startHarness, type Harness } from './harness.js';

/**
 * X-Forwarded-For is believed only from a TRUST_PROXY peer. Every request of these tests comes
 * from 127.0.0.1: trusted in one control plane, not in the other.
 */
let trusting: Harness;
let plain: Harness;
beforeAll(async () => {
  [trusting, plain] = await Promise.all([startHarness('xff-trusted', { env: { TRUST_PROXY: '127.0.0.1, ::1' } }), startHarness('xff-ignored')]);
});
afterAll(async () => Promise.all([trusting?.close(), plain?.close()]));

const xff = (value: string) => ({ 'x-forwarded-for': value });

async function createdProjectIp(h: Harness, forwardedFor: string): Promise<string | null> {
  // Names are unique per account: each project here gets its own.
  const res = await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: `behind a balancer ${forwardedFor}` }, headers: xff(forwardedFor) });
  expect(res.status).toBe(201);
  const [row] = await h.sql`select client_ip from audit_events where type = 'project.created' and project_id = ${res.body.id}`;
  return row?.client_ip ?? null;
}

/**
 * Failed sign-ins with fresh emails from one claimed address, until the address is throttled. Each
 * costs a password hash at scrypt's production cost (an unknown email is hashed like a known one),
 * hence the longer timeouts of the tests that spray.
 */
const SPRAY = { timeout: 300_000 };
async function sprayUntilThrottled(h: Harness, forwardedFor: () => string): Promise<number> {
  for (let attempt = 1; attempt <= DEFAULT_THROTTLE_LIMITS.perIp + 1; attempt++) {
    const res = await h.api('POST', '/v1/signins', {
      body: { grant_type: 'password', email: `spray-${attempt}@example.test`, password: 'guess' },
      headers: xff(forwardedFor()),
    });
    if (res.status === 429) return attempt;
    expect(res.status).toBe(401);
  }
  return Number.POSITIVE_INFINITY;
}

describe('with TRUST_PROXY', () => {
  it('records the forwarded client, the rightmost address no trusted proxy wrote', async () => {
    expect(await createdProjectIp(trusting, '203.0.113.7')).toBe('203.0.113.7');
    // The client put 6.6.6.6 in front itself; the balancer appended what it saw.
    expect(await createdProjectIp(trusting, '6.6.6.6, 203.0.113.8')).toBe('203.0.113.8');
  });

  it('throttles sign-ins per forwarded address, not per balancer', SPRAY, async () => {
    expect(await sprayUntilThrottled(trusting, () => '198.51.100.1')).toBe(DEFAULT_THROTTLE_LIMITS.perIp + 1);
    // Another client behind the same balancer is not blocked by the first one's failures.
    const other = await trusting.api('POST', '/v1/signins', {
      body: { grant_type: 'password', email: 'someone@example.test', password: 'guess' },
      headers: xff('198.51.100.2'),
    });
    expect(other.status).toBe(401);
    const [blocked] = await trusting.sql`select client_ip from audit_events where type = 'signin.failed' and status = 429`;
    expect(blocked?.client_ip).toBe('198.51.100.1');
  });
});

describe('without TRUST_PROXY', () => {
  it('ignores X-Forwarded-For: the TCP peer is the client', async () => {
    expect(await createdProjectIp(plain, '203.0.113.7')).toBe('127.0.0.1');
  });

  it('throttles per TCP peer however the header varies', SPRAY, async () => {
    let n = 0;
    expect(await sprayUntilThrottled(plain, () => `198.51.100.${++n}`)).toBe(DEFAULT_THROTTLE_LIMITS.perIp + 1);
  });
});
