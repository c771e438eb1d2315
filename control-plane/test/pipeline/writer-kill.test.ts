import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisKeys } from '@gateway/shared';
import type { Db } from '../../src/db/connect.js';
import { freshDatabaseUrl, testRedisPrefix, TEST_REDIS_URL, type TestDatabase } from '../../../test-support/databases.js';
import { spawnNode, waitForOutput, type Child } from '../../../test-support/processes.js';
import { clearRedisPrefix, createFixture, exactlyOnce, landedOnce, openDatabase, proxyBuffer, pushRequests, recordsQueue, rowCounts, waitForRows } from './pipeline-fixtures.js';

/**
 * A writer process is SIGKILLed while it writes: the batches it held stay active in Redis with a
 * lock nobody renews. A second writer takes them over once the lock expires and writes them; what
 * the first had already committed is skipped, so rows and projects.used_tokens count once.
 */
describe('pipeline: writer killed mid-batch', () => {
  let db: TestDatabase;
  let sql: Db;
  const children: Child[] = [];

  beforeAll(async () => {
    db = freshDatabaseUrl('writerkill');
    sql = await openDatabase(db.url);
  });

  afterAll(async () => {
    for (const child of children) await child.kill('SIGKILL');
    await sql?.end({ timeout: 1 });
    await db?.drop();
  });

  it('a second writer finishes the batches of a killed one, each record once', { timeout: 120_000 }, async () => {
    const fixture = await createFixture(sql, 4, 3);
    const keys = new RedisKeys(testRedisPrefix('writerkill'));
    const proxy = await proxyBuffer(TEST_REDIS_URL, keys);
    const jobs = recordsQueue(TEST_REDIS_URL, keys);
    try {
      // 60,000 records in 120 batches, queued while no writer runs.
      const pushed = pushRequests(proxy.buffer, fixture, 30_000);
      await proxy.buffer.flush(20_000);
      expect(proxy.buffer.buffered).toBe(0);

      const env = { DATABASE_URL: db.url, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: keys.prefix, WRITER_PORT: '0', WRITER_CONCURRENCY: '4', LOG_LEVEL: 'info' };
      const first = spawnNode('control-plane/dist/writer-main.js', [], env);
      children.push(first);
      await waitForOutput(first, /writer started/);
      // Kill it once it has written some batches and holds others.
      const deadline = Date.now() + 30_000;
      for (;;) {
        const [written, counts] = await Promise.all([rowCounts(sql), jobs.queue.getJobCounts('active')]);
        if (written.usage > 0 && (counts.active ?? 0) > 0) break;
        if (Date.now() > deadline) throw new Error('the first writer never got going');
        await new Promise((r) => setTimeout(r, 5));
      }
      await first.kill('SIGKILL');
      const atKill = await rowCounts(sql);
      expect(atKill.usage).toBeLessThan(pushed.usage.length);

      const second = spawnNode('control-plane/dist/writer-main.js', [], env);
      children.push(second);
      await waitForOutput(second, /writer started/);
      await waitForRows(sql, { usage: pushed.usage.length, audit: pushed.audit.length }, 90_000);
      // Quiet for the stalled batches too: nothing is left in the queue to add a second copy.
      const left = await jobs.queue.getJobCounts('waiting', 'delayed', 'active');
      expect((left.waiting ?? 0) + (left.delayed ?? 0) + (left.active ?? 0)).toBe(0);
      expect(await exactlyOnce(sql, pushed)).toEqual(landedOnce(pushed));
      // A graceful stop finishes what it holds and exits 0.
      expect(await second.kill('SIGTERM')).toBe(0);
    } finally {
      await jobs.close();
      await proxy.close();
      await clearRedisPrefix(TEST_REDIS_URL, keys.prefix);
    }
  });
});
