import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisKeys } from '@gateway/shared';
import type { Db } from '../../src/db/connect.js';
import type { Writer } from '../../src/writer/start-writer.js';
import { freshDatabaseUrl, testRedisPrefix, TEST_REDIS_URL, type TestDatabase } from '../../../test-support/databases.js';
import { clearRedisPrefix, createFixture, exactlyOnce, landedOnce, metricValue, openDatabase, proxyBuffer, pushRequests, startTestWriter, waitForRows } from './pipeline-fixtures.js';

/**
 * PostgreSQL drops the writer's connections in the middle of its transactions (what a failover, a
 * restart or pg_terminate_backend does). postgres.js 3.4 throws from a timer, outside any promise,
 * when anything is written to such a connection afterwards (its own transaction rollback does),
 * which would kill the writer process; and it can leave the connection unable to reconnect. The
 * writer must survive both and still write every record once.
 */
describe('pipeline: Postgres drops the writer connections mid-transaction', () => {
  let db: TestDatabase;
  let sql: Db;
  let writer: Writer | undefined;
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown) => uncaught.push(err);

  beforeAll(async () => {
    db = freshDatabaseUrl('conndrops');
    sql = await openDatabase(db.url);
    process.on('uncaughtException', onUncaught);
  });

  afterAll(async () => {
    process.off('uncaughtException', onUncaught);
    await writer?.close();
    await sql?.end({ timeout: 1 });
    await db?.drop();
  });

  it('keeps writing, once each, while its connections are terminated again and again', { timeout: 120_000 }, async () => {
    const fixture = await createFixture(sql);
    const keys = new RedisKeys(testRedisPrefix('conndrops'));
    const proxy = await proxyBuffer(TEST_REDIS_URL, keys);
    try {
      const pushed = pushRequests(proxy.buffer, fixture, 30_000);
      await proxy.buffer.flush(20_000);
      // A lower backoff ceiling than production's only shortens the wait for batches that failed.
      const w = await startTestWriter({ DATABASE_URL: db.url, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: keys.prefix }, { maxBackoffMs: 2_000 });
      writer = w;
      let kills = 0;
      for (let round = 0; round < 40; round++) {
        const killed = await sql<{ pid: number }[]>`
          select pid from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid() and state in ('active', 'idle in transaction')`;
        for (const { pid } of killed) await sql`select pg_terminate_backend(${pid})`;
        kills += killed.length;
        await new Promise((r) => setTimeout(r, 50));
      }
      await waitForRows(sql, { usage: pushed.usage.length, audit: pushed.audit.length }, 90_000);
      expect(uncaught).toEqual([]);
      expect(kills).toBeGreaterThan(0);
      expect(await metricValue(w.metrics, 'gateway_writer_batches_retried_total')).toBeGreaterThan(0);
      expect(await exactlyOnce(sql, pushed)).toEqual(landedOnce(pushed));
    } finally {
      await proxy.close();
      await writer?.close();
      await clearRedisPrefix(TEST_REDIS_URL, keys.prefix);
    }
  });
});
