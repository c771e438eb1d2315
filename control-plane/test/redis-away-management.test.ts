import { afterAll, beforeAll, expect, it } from 'vitest';
import { decodeProjectPolicy, RedisKeys } from '@gateway/shared';
import { Redis } from 'ioredis';
import { eventually } from '../../test-support/processes.js';
import { startPrivateRedis, type PrivateRedis } from '../../test-support/services.js';
import { startHarness, type Harness } from './harness.js';

/**
 * Management calls while the control plane's Redis is away: a key creation is refused at once
 * (503, nothing created, because the proxies could not look the key up), while a project change is
 * committed and answered, and reaches Redis with the rebuild that follows the reconnect — also
 * when Redis comes back empty. Nothing waits for Redis to return.
 */
let redis: PrivateRedis;
let h: Harness;
let projectId: string;

beforeAll(async () => {
  redis = await startPrivateRedis();
  h = await startHarness('redis-away', { env: { REDIS_URL: redis.url } });
  const created = await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: 'away', quota_tokens: 1000 } });
  expect(created.status).toBe(201);
  projectId = created.body.id;
}, 60_000);

afterAll(async () => {
  await h?.close();
  await redis?.stop('SIGKILL');
});

async function policyInRedis(): Promise<{ quota_tokens: number | null } | null> {
  const client = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await client.connect();
    const raw = await client.get(new RedisKeys(h.prefix).projectPolicy(projectId));
    return raw === null ? null : decodeProjectPolicy(raw);
  } finally {
    client.disconnect();
  }
}

it('refuses a key creation at once and commits a project change while Redis is away; the change reaches Redis when it returns', async () => {
  await redis.stop('SIGKILL');
  // The control plane notices the lost connection.
  await eventually(async () => {
    const res = await h.api('POST', `/v1/projects/${projectId}/keys`, { token: h.adminToken, body: { name: 'during' } });
    return res.status === 503;
  }, 'key creation refused while Redis is away');
  const refused = await h.api('POST', `/v1/projects/${projectId}/keys`, { token: h.adminToken, body: { name: 'during' } });
  expect(refused.status).toBe(503);
  expect(refused.body.error.code).toBe('UNAVAILABLE');
  const keys = await h.api('GET', `/v1/projects/${projectId}/keys?include_deleted=true`, { token: h.adminToken });
  expect(keys.status).toBe(200);
  expect(keys.body.data.filter((k: { name: string }) => k.name === 'during')).toEqual([]);

  const patched = await h.api('PATCH', `/v1/projects/${projectId}`, { token: h.adminToken, body: { quota_tokens: 5000 } });
  expect(patched.status).toBe(200);
  expect(patched.body.quota_tokens).toBe(5000);

  // Back, empty: the rebuild after the reconnect projects the committed policy.
  await redis.start();
  await eventually(async () => (await policyInRedis())?.quota_tokens === 5000, 'the changed policy in Redis after the rebuild', 30_000);
  const created = await h.api('POST', `/v1/projects/${projectId}/keys`, { token: h.adminToken, body: { name: 'after' } });
  expect(created.status).toBe(201);
}, 90_000);
