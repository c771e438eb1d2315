import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { decodeRecordBatch, RedisKeys, type AuditEvent, type UsageRecord } from '@gateway/shared';
import { startProxy, type Proxy } from '../src/proxy.js';
import { TEST_REDIS_URL, testRedisPrefix } from '../../test-support/databases.js';
import { clearPrefix, markProjectionReady, testRedis } from '../../test-support/redis.js';

/**
 * A real proxy (uWebSockets.js, real Redis) on a free port, with its own Redis prefix and a
 * providers file written for the test. Records are read back from the BullMQ queue they land in.
 */
export interface Harness {
  proxy: Proxy;
  url: string;
  redis: Redis;
  keys: RedisKeys;
  prefix: string;
  /** Everything enqueued so far; `raw` holds each decoded batch as JSON, for secret scans. */
  records(): Promise<{ usage: UsageRecord[]; audit: AuditEvent[]; raw: string[] }>;
  stop(): Promise<void>;
}

export async function startHarness(label: string, providersYaml: string, env: Record<string, string> = {}): Promise<Harness> {
  const prefix = testRedisPrefix(label);
  const dir = mkdtempSync(join(tmpdir(), 'gw-proxy-'));
  const file = join(dir, 'providers.yaml');
  writeFileSync(file, providersYaml);
  const redis = testRedis();
  const keys = new RedisKeys(prefix);
  // No control plane here: the projection is written by hand, and is complete from the start.
  await markProjectionReady(redis, keys);
  const proxy = await startProxy({
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: prefix,
    PROXY_PORT: '0',
    METRICS_PORT: '0',
    PROXY_HOST: '127.0.0.1',
    GATEWAY_CONFIG: file,
    LOG_LEVEL: 'silent',
    DRAIN_TIMEOUT_MS: '2000',
    ...env,
  });
  const queue = new Queue(keys.recordsQueue, { connection: redis.duplicate({ maxRetriesPerRequest: null }), prefix: keys.bullPrefix });
  return {
    proxy,
    url: `http://127.0.0.1:${proxy.port}`,
    redis,
    keys,
    prefix,
    async records() {
      await proxy.deps.records.flush(5_000);
      const jobs = await queue.getJobs(['waiting', 'delayed', 'active', 'completed', 'prioritized']);
      const usage: UsageRecord[] = [];
      const audit: AuditEvent[] = [];
      const raw: string[] = [];
      for (const job of jobs) {
        const batch = decodeRecordBatch(job.data);
        raw.push(JSON.stringify(batch));
        usage.push(...batch.usage);
        audit.push(...batch.audit);
      }
      return { usage, audit, raw };
    },
    async stop() {
      await proxy.drain();
      await queue.close();
      await clearPrefix(redis, prefix);
      await redis.quit();
    },
  };
}
