import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectTestKey, type TestKey } from '../../test-support/redis.js';
import { startHarness, type Harness } from './harness.js';

/** X-Forwarded-For names the client only when the TCP peer is a trusted proxy (TRUST_PROXY). */
const providers = `providers:\n  - name: builtin\n    type: mock\n    models: [mock-1]\n`;
let trusting: Harness;
let plain: Harness;
let trustingKey: TestKey;
let plainKey: TestKey;

beforeAll(async () => {
  trusting = await startHarness('xff-trust', providers, { TRUST_PROXY: '127.0.0.1/32, ::1' });
  plain = await startHarness('xff-plain', providers);
  trustingKey = await projectTestKey(trusting.redis, trusting.keys);
  plainKey = await projectTestKey(plain.redis, plain.keys);
});

afterAll(async () => {
  await trusting?.stop();
  await plain?.stop();
});

async function clientIpOf(h: Harness, key: TestKey, forwardedFor: string): Promise<string | null> {
  const res = await fetch(`${h.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key.key, 'x-forwarded-for': forwardedFor },
    body: JSON.stringify({ model: 'mock-1', messages: [{ role: 'user', content: 'hi' }] }),
  });
  expect(res.status).toBe(200);
  const requestId = res.headers.get('x-request-id');
  const { audit } = await h.records();
  return audit.find((a) => a.request_id === requestId)?.client_ip ?? null;
}

describe('client address', () => {
  it('takes the rightmost untrusted X-Forwarded-For address behind a trusted proxy', async () => {
    expect(await clientIpOf(trusting, trustingKey, '198.51.100.9, 203.0.113.7')).toBe('203.0.113.7');
    expect(await clientIpOf(trusting, trustingKey, '203.0.113.8, 127.0.0.1')).toBe('203.0.113.8');
  });

  it('ignores X-Forwarded-For without TRUST_PROXY', async () => {
    const ip = await clientIpOf(plain, plainKey, '203.0.113.7');
    expect(ip).not.toBe('203.0.113.7');
    expect(ip).toMatch(/127\.0\.0\.1|::1/);
  });
});
