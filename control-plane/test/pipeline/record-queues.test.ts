import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisKeys } from '@gateway/shared';
import type { Db } from '../../src/db/connect.js';
import type { Writer } from '../../src/writer/start-writer.js';
import { RecordBuffer } from '../../../proxy/src/records/record-buffer.js';
import { freshDatabaseUrl, testRedisPrefix, TEST_REDIS_URL, type TestDatabase } from '../../../test-support/databases.js';
import { clearRedisPrefix, createFixture, openDatabase, requestRecords, startTestWriter, type Fixture } from './pipeline-fixtures.js';

/**
 * RECORD_QUEUES: proxies send to one of several record queues, each under a hash tag of its own
 * (spread over a Redis Cluster's masters), and a writer takes batches from all of them.
 */
describe('writer: several record queues', () => {
  let db: TestDatabase;
  let sql: Db;
  let fixture: Fixture;
  let keys: RedisKeys;
  let writer: Writer;
  const opened: { close(): Promise<unknown> }[] = [];

  beforeAll(async () => {
    db = freshDatabaseUrl('recordqueues');
    sql = await openDatabase(db.url);
    fixture = await createFixture(sql);
    keys = new RedisKeys(testRedisPrefix('recordqueues'));
  });

  afterAll(async () => {
    for (const o of opened) await o.close();
    await writer?.close();
    if (keys) await clearRedisPrefix(TEST_REDIS_URL, keys.prefix);
    await sql?.end({ timeout: 1 });
    await db?.drop();
  });

  it('gives each queue after the first a hash tag of its own', () => {
    const tag = (prefix: string) => /\{([^}]*)\}/.exec(prefix)?.[1];
    expect(keys.recordsQueuePrefix(0)).toBe(keys.bullPrefix);
    const tags = [0, 1, 2, 3].map((i) => tag(keys.recordsQueuePrefix(i)));
    expect(new Set(tags).size).toBe(4);
  });

  it('lands what proxies sent to each of three queues', async () => {
    // Each producer on its own queue, as proxy workers pick one at start.
    const buffers = [0, 1, 2].map((shard) => {
      const connection = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
      connection.on('error', () => {});
      const buffer = new RecordBuffer({
        connection,
        keys,
        queuePrefix: keys.recordsQueuePrefix(shard),
        config: { recordBatchSize: 50, recordFlushMs: 5, recordBufferMax: 10_000 },
        registry: new Registry(),
        log: { info() {}, warn() {} },
      });
      opened.push({ close: async () => (await buffer.close(5_000), await connection.quit()) });
      return buffer;
    });
    const ids: string[] = [];
    for (let i = 0; i < 90; i++) {
      const { usage, audit } = requestRecords(fixture);
      ids.push(usage.id);
      buffers[i % 3]!.pushAudit(audit);
      buffers[i % 3]!.pushUsage(usage);
    }
    for (const b of buffers) await b.flush(5_000);
    const probe = new Redis(TEST_REDIS_URL);
    try {
      for (const shard of [0, 1, 2]) {
        const waiting = await probe.llen(`${keys.recordsQueuePrefix(shard)}:${keys.recordsQueue}:wait`);
        expect(waiting, `queue ${shard} got batches`).toBeGreaterThan(0);
      }
    } finally {
      probe.disconnect();
    }

    writer = await startTestWriter({ DATABASE_URL: db.url, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: keys.prefix, RECORD_QUEUES: '3' });
    const deadline = Date.now() + 20_000;
    for (;;) {
      const n = (await sql<{ n: number }[]>`select count(*)::int as n from usage_records where id = any(${sql.array(ids)}::uuid[])`)[0]!.n;
      if (n === 90) break;
      if (Date.now() > deadline) throw new Error(`${n} of 90 usage records landed`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const audits = (await sql<{ n: number }[]>`select count(*)::int as n from audit_events where id = any(${sql.array(ids)}::uuid[])`)[0]!.n;
    expect(audits).toBe(90);
  });
});
