import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisKeys } from '@gateway/shared';
import type { Db } from '../../src/db/connect.js';
import { freshDatabaseUrl, testRedisPrefix, type TestDatabase } from '../../../test-support/databases.js';
import { eventually, spawnNode, waitForOutput, type Child } from '../../../test-support/processes.js';
import { startPrivateRedis, type PrivateRedis } from '../../../test-support/services.js';
import { createFixture, exactlyOnce, landedOnce, metricValue, openDatabase, proxyBuffer, rowCounts, steadyTraffic, waitForRows } from './pipeline-fixtures.js';

/**
 * Two faults at once: Redis goes away (without persistence: its queue is lost) while records flow,
 * and while it is still away the writer process is SIGKILLed and started again. The new writer
 * waits for Redis instead of exiting; the proxy's buffer holds the records and re-sends every
 * batch no writer had finished. Once Redis is back, every record lands exactly once.
 */
describe('pipeline: writer killed while Redis is down', () => {
  let redis: PrivateRedis;
  let db: TestDatabase;
  let sql: Db;
  const children: Child[] = [];

  beforeAll(async () => {
    redis = await startPrivateRedis();
    db = freshDatabaseUrl('writerkillredisdown');
    sql = await openDatabase(db.url);
  });

  afterAll(async () => {
    for (const child of children) await child.kill('SIGKILL');
    await sql?.end({ timeout: 1 });
    await db?.drop();
    await redis?.stop('SIGKILL');
  });

  it('lands every record once after the writer restarts before Redis does', { timeout: 180_000 }, async () => {
    const fixture = await createFixture(sql, 4, 3);
    const keys = new RedisKeys(testRedisPrefix('writerkillredisdown'));
    const env = { DATABASE_URL: db.url, REDIS_URL: redis.url, REDIS_PREFIX: keys.prefix, WRITER_PORT: '0', WRITER_CONCURRENCY: '4', LOG_LEVEL: 'info' };
    const first = spawnNode('control-plane/dist/writer-main.js', [], env);
    children.push(first);
    await waitForOutput(first, /writer started/);
    const proxy = await proxyBuffer(redis.url, keys);
    try {
      const traffic = steadyTraffic(proxy.buffer, fixture, 2_000);
      await eventually(async () => (await rowCounts(sql)).usage > 0, 'the first writer writes', 30_000);

      await redis.stop('SIGKILL');
      const atOutage = await rowCounts(sql);
      await first.kill('SIGKILL');
      const second = spawnNode('control-plane/dist/writer-main.js', [], env);
      children.push(second);
      // The new writer is up against a Redis that is still away: it waits, it does not exit.
      await waitForOutput(second, /waiting for Redis at redis:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\); attempt 2/, 30_000);
      expect(second.process.exitCode).toBeNull();
      // Requests keep arriving meanwhile: the proxy buffers their records.
      await eventually(async () => (await metricValue(proxy.registry, 'gateway_records_buffered')) > 1_000, 'records buffered while Redis is down', 30_000);

      await redis.start();
      await waitForOutput(second, /writer started/, 60_000);
      await eventually(async () => (await metricValue(proxy.registry, 'gateway_records_resent_total')) > 0, 'unfinished batches sent again', 30_000);
      const pushed = traffic.stop();
      await proxy.buffer.flush(30_000);
      await waitForRows(sql, { usage: pushed.usage.length, audit: pushed.audit.length }, 90_000);
      expect(pushed.usage.length).toBeGreaterThan(atOutage.usage);
      expect(await exactlyOnce(sql, pushed)).toEqual(landedOnce(pushed));
      expect(await metricValue(proxy.registry, 'gateway_records_dropped_total')).toBe(0);
      expect(await second.kill('SIGTERM')).toBe(0);
    } finally {
      await proxy.close();
    }
  });
});
