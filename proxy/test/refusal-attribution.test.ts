import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeRecordBatch, RedisKeys, type AuditEvent } from '@gateway/shared';
import { eventually, spawnMockUpstream, type MockUpstreamProcess } from '../../test-support/processes.js';
import { projectTestKey } from '../../test-support/redis.js';
import { startPrivateRedis, type PrivateRedis } from '../../test-support/services.js';
import { startProxy, type Proxy } from '../src/proxy.js';

/**
 * A refusal is attributed to the presented key's project whenever the proxy knows the key, even
 * when it cannot verify keys at all (Redis gone): the project's audit trail must show it.
 */
let redisServer: PrivateRedis;
let upstream: MockUpstreamProcess;
let proxy: Proxy;
let redis: Redis;
const keys = new RedisKeys('attr:');

beforeAll(async () => {
  redisServer = await startPrivateRedis();
  upstream = await spawnMockUpstream();
  const dir = mkdtempSync(join(tmpdir(), 'gw-attr-'));
  const file = join(dir, 'providers.yaml');
  writeFileSync(file, `providers:\n  - name: upstream\n    type: openai\n    base_url: ${upstream.baseUrl}\n    models: [gpt-4o-mini]\n`);
  proxy = await startProxy({
    REDIS_URL: redisServer.url,
    REDIS_PREFIX: 'attr:',
    PROXY_PORT: '0',
    METRICS_PORT: '0',
    PROXY_HOST: '127.0.0.1',
    GATEWAY_CONFIG: file,
    LOG_LEVEL: 'silent',
    DRAIN_TIMEOUT_MS: '1000',
    KEY_STALE_BOUND_MS: '200',
  });
  redis = new Redis(redisServer.url, { maxRetriesPerRequest: null });
  redis.on('error', () => undefined);
});

afterAll(async () => {
  await proxy?.drain();
  redis?.disconnect();
  await upstream?.stop();
  await redisServer?.stop();
});

const hello = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] };

function post(apiKey: string): Promise<Response> {
  return fetch(`http://127.0.0.1:${proxy.port}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
    body: JSON.stringify(hello),
  });
}

describe('a refusal while keys cannot be verified', () => {
  it('carries the project and key of a key the proxy already knows', async () => {
    const key = await projectTestKey(redis, keys);
    expect((await post(key.key)).status).toBe(200);

    await redisServer.stop('SIGKILL');
    let refusedId = '';
    await eventually(async () => {
      const res = await post(key.key);
      if (res.status !== 503) return false;
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('UNAVAILABLE');
      refusedId = res.headers.get('x-request-id') as string;
      return true;
    }, 'a 503 UNAVAILABLE once keys are unverifiable', 10_000);

    // Redis returns empty; the proxy's buffered records are delivered to it.
    await redisServer.start();
    await proxy.deps.records.flush(10_000);
    const queue = new Queue(keys.recordsQueue, { connection: redis.duplicate({ maxRetriesPerRequest: null }), prefix: keys.bullPrefix });
    let refusal: AuditEvent | undefined;
    await eventually(async () => {
      const jobs = await queue.getJobs(['waiting', 'delayed', 'active', 'completed', 'prioritized']);
      const audit = jobs.flatMap((job) => decodeRecordBatch(job.data).audit);
      refusal = audit.find((a) => a.request_id === refusedId);
      return refusal !== undefined;
    }, 'the refusal audited', 15_000);
    await queue.close();
    expect(refusal).toMatchObject({ status: 503, error_code: 'UNAVAILABLE', project_id: key.projectId, key_id: key.id });
  });
});
