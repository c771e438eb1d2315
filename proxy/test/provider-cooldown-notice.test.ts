import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisKeys } from '@gateway/shared';
import { TEST_REDIS_URL, testRedisPrefix } from '../../test-support/databases.js';
import { spawnNode, waitForOutput, type Child } from '../../test-support/processes.js';
import { clearPrefix, projectTestKey, testRedis, type TestKey } from '../../test-support/redis.js';
import { freePort } from '../../test-support/services.js';
import { startHarness, type Harness } from './harness.js';

/**
 * A provider that fails says so on the console — one line per provider at most every 10 s, and a
 * line when it enters its cooldown — not only in /metrics; and the audit events of requests
 * served meanwhile name the providers the cooldown passed over.
 */
let providersYaml: string;

beforeAll(async () => {
  // Nothing listens there: every attempt is refused at once, a retryable failure.
  const closed = await freePort();
  providersYaml = `providers:
  - name: down
    type: openai
    base_url: http://127.0.0.1:${closed}/v1
    api_key: unused
    models: [mock-1]
  - name: builtin
    type: mock
    models: [mock-1]
cooldown: { failures: 2, base_ms: 60000, max_ms: 60000 }
`;
});

function chat(url: string, key: string): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ model: 'mock-1', messages: [{ role: 'user', content: 'hi' }] }),
  });
}

describe('audit events', () => {
  let h: Harness;
  let key: TestKey;
  beforeAll(async () => {
    h = await startHarness('cooldown-audit', providersYaml);
    key = await projectTestKey(h.redis, h.keys);
  });
  afterAll(async () => h?.stop());

  it('name the providers a cooldown skipped', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await chat(h.url, key.key);
      expect(res.status).toBe(200);
      ids.push(res.headers.get('x-request-id')!);
    }
    const { audit } = await h.records();
    const events = ids.map((id) => audit.find((a) => a.request_id === id)!);
    // Two failures open the cooldown; after it, `down` is passed over and only named as skipped.
    expect(events.slice(0, 2).map((e) => [e.providers, e.skipped])).toEqual([
      [['down', 'builtin'], undefined],
      [['down', 'builtin'], undefined],
    ]);
    expect(events.slice(2).map((e) => [e.providers, e.skipped])).toEqual([
      [['builtin'], ['down']],
      [['builtin'], ['down']],
    ]);
  });
});

describe('the console', () => {
  let proxy: Child;
  let redis: Redis;
  const prefix = testRedisPrefix('cooldown-console');
  let url: string;

  beforeAll(async () => {
    redis = testRedis();
    const dir = mkdtempSync(join(tmpdir(), 'gw-cooldown-'));
    const file = join(dir, 'providers.yaml');
    writeFileSync(file, providersYaml);
    proxy = spawnNode('proxy/dist/main.js', [], {
      PROXY_WORKERS: '1',
      PROXY_PORT: '0',
      METRICS_PORT: '0',
      PROXY_HOST: '127.0.0.1',
      REDIS_URL: TEST_REDIS_URL,
      REDIS_PREFIX: prefix,
      GATEWAY_CONFIG: file,
      LOG_LEVEL: 'info',
    });
    const [, port] = await waitForOutput(proxy, /"port":(\d+)[^\n]*"msg":"proxy listening"/, 30_000);
    url = `http://127.0.0.1:${port}`;
  });

  afterAll(async () => {
    await proxy?.kill('SIGTERM');
    await clearPrefix(redis, prefix);
    await redis.quit();
  });

  it('says when a provider fails and when it enters its cooldown, one line at a time', async () => {
    const key = await projectTestKey(redis, new RedisKeys(prefix));
    for (let i = 0; i < 30; i++) expect((await chat(url, key.key)).status).toBe(200);
    await waitForOutput(proxy, /provider down failed \([A-Z_]+\); skipped for 60 s/, 5_000);
    const lines = proxy.output().split('\n').filter((l) => l.includes('provider down'));
    // The first failure, then the cooldown: not a line per request.
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/provider down failed \(UPSTREAM_ERROR\); the next provider/);
  });
});
