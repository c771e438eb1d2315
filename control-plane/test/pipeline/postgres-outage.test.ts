import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisKeys } from '@gateway/shared';
import type { Db } from '../../src/db/connect.js';
import type { Writer } from '../../src/writer/start-writer.js';
import { testRedisPrefix, TEST_REDIS_URL, uniqueName } from '../../../test-support/databases.js';
import { startPrivatePostgres, type PrivatePostgres } from '../../../test-support/services.js';
import { clearRedisPrefix, createFixture, exactlyOnce, landedOnce, metricValue, openDatabase, proxyBuffer, startTestWriter, steadyTraffic, waitForRows } from './pipeline-fixtures.js';

/**
 * PostgreSQL stops for ~20 s while records flow. Batches queue up in Redis; the writer's failed
 * batches go back to BullMQ with backoff and the writer waits for Postgres before taking more.
 * After the restart everything lands, once.
 */
describe('pipeline: PostgreSQL outage', () => {
  let pg: PrivatePostgres;
  let sql: Db;
  let writer: Writer | undefined;

  beforeAll(async () => {
    pg = await startPrivatePostgres();
    sql = await openDatabase(pg.urlFor(uniqueName('pgoutage')));
  });

  afterAll(async () => {
    await writer?.close();
    await sql?.end({ timeout: 1 });
    await pg?.destroy();
  });

  it('lands every record pushed before, during and after the outage exactly once', { timeout: 150_000 }, async () => {
    const fixture = await createFixture(sql);
    const keys = new RedisKeys(testRedisPrefix('pgoutage'));
    const databaseUrl = pg.urlFor((await sql<{ db: string }[]>`select current_database() as db`)[0]!.db);
    // A lower backoff ceiling than production's only shortens the wait after the restart.
    const w = await startTestWriter({ DATABASE_URL: databaseUrl, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: keys.prefix }, { maxBackoffMs: 3_000 });
    writer = w;
    const proxy = await proxyBuffer(TEST_REDIS_URL, keys);
    try {
      const traffic = steadyTraffic(proxy.buffer, fixture, 500);
      await new Promise((r) => setTimeout(r, 2_000));
      await pg.stop();
      await new Promise((r) => setTimeout(r, 20_000));
      await pg.start();
      await new Promise((r) => setTimeout(r, 2_000));
      const pushed = traffic.stop();
      await proxy.buffer.flush(10_000);
      await waitForRows(sql, { usage: pushed.usage.length, audit: pushed.audit.length }, 60_000);
      expect(await exactlyOnce(sql, pushed)).toEqual(landedOnce(pushed));
      // The outage was seen (and survived) by the writer, not skipped over.
      expect(await metricValue(w.metrics, 'gateway_writer_batches_retried_total')).toBeGreaterThan(0);
      expect(await metricValue(proxy.registry, 'gateway_records_dropped_total')).toBe(0);
    } finally {
      await proxy.close();
      await writer?.close();
      await clearRedisPrefix(TEST_REDIS_URL, keys.prefix);
    }
  });
});
