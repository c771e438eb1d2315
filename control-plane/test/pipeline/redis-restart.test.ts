import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisKeys } from '@gateway/shared';
import type { Db } from '../../src/db/connect.js';
import type { Writer } from '../../src/writer/start-writer.js';
import { freshDatabaseUrl, testRedisPrefix, type TestDatabase } from '../../../test-support/databases.js';
import { startPrivateRedis, type PrivateRedis } from '../../../test-support/services.js';
import { createFixture, exactlyOnce, landedOnce, metricValue, openDatabase, proxyBuffer, recordsQueue, startTestWriter, steadyTraffic, waitForRows } from './pipeline-fixtures.js';

/**
 * Redis restarts without persistence while records flow: the queue, and any batch in it that no
 * writer had taken, is gone. The proxy's buffer holds records while Redis is down and re-sends
 * the batches no writer confirmed, so every record still lands once.
 */
describe('pipeline: Redis restart', () => {
  let redis: PrivateRedis;
  let db: TestDatabase;
  let sql: Db;
  let writer: Writer | undefined;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    db = freshDatabaseUrl('redisrestart');
    sql = await openDatabase(db.url);
  });

  afterAll(async () => {
    await writer?.close();
    await sql?.end({ timeout: 1 });
    await db?.drop();
    await redis?.stop('SIGKILL');
  });

  it('lands every record pushed before, during and after the restart exactly once', { timeout: 120_000 }, async () => {
    const fixture = await createFixture(sql);
    const keys = new RedisKeys(testRedisPrefix('redisrestart'));
    const w = await startTestWriter({ DATABASE_URL: db.url, REDIS_URL: redis.url, REDIS_PREFIX: keys.prefix });
    writer = w;
    const proxy = await proxyBuffer(redis.url, keys);
    const jobs = recordsQueue(redis.url, keys);
    try {
      const traffic = steadyTraffic(proxy.buffer, fixture, 1_000);
      await new Promise((r) => setTimeout(r, 1_500));
      // A writer falling behind leaves a backlog in Redis at the moment it dies.
      await w.recordWorker.worker.pause();
      await new Promise((r) => setTimeout(r, 1_000));
      const backlog = await jobs.queue.getJobCounts('waiting');
      expect(backlog.waiting).toBeGreaterThan(0);
      // Killed, not shut down: the backlog is lost with it.
      await redis.restart(2_000);
      w.recordWorker.worker.resume();
      await new Promise((r) => setTimeout(r, 2_000));
      const pushed = traffic.stop();
      await proxy.buffer.flush(15_000);
      await waitForRows(sql, { usage: pushed.usage.length, audit: pushed.audit.length }, 60_000);
      expect(await exactlyOnce(sql, pushed)).toEqual(landedOnce(pushed));
      expect(await metricValue(proxy.registry, 'gateway_records_dropped_total')).toBe(0);
      expect(await metricValue(proxy.registry, 'gateway_records_resent_total')).toBeGreaterThan(0);
    } finally {
      await jobs.close();
      await proxy.close();
    }
  });
});
