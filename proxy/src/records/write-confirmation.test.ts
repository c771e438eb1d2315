import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, RedisKeys } from '@gateway/shared';
import { TEST_REDIS_URL, testRedisPrefix } from '../../../test-support/databases.js';
import { clearPrefix } from '../../../test-support/redis.js';
import { encodeBatch, type OutgoingBatch } from './outgoing-batch.js';
import { batchOf } from './record-fixtures.case.js';
import { RecordsQueue } from './records-queue.js';
import { SentBatches } from './sent-batches.js';
import { parseRunId, WriteConfirmation } from './write-confirmation.js';

describe('WriteConfirmation', () => {
  const keys = new RedisKeys(testRedisPrefix('writeconfirm'));
  let connection: Redis;
  let records: RecordsQueue;
  let jobs: Queue;

  beforeAll(async () => {
    connection = await connectRedis(TEST_REDIS_URL);
    records = new RecordsQueue(connection, keys);
    jobs = new Queue(keys.recordsQueue, { connection: connection.duplicate(), prefix: keys.bullPrefix });
  });

  afterAll(async () => {
    await records.close();
    await jobs.close();
    await clearPrefix(connection, keys.prefix);
    await connection.quit();
  });

  function confirmation() {
    const sent = new SentBatches();
    const resent: OutgoingBatch[][] = [];
    const check = new WriteConfirmation({ connection, sent, jobKey: (id) => records.jobKey(id), intervalMs: 3_600_000, resend: (b) => resent.push(b) });
    return { sent, resent, check };
  }

  async function send(sent: SentBatches, batch: OutgoingBatch): Promise<void> {
    await records.add(batch.id, encodeBatch(batch));
    sent.add(batch);
  }

  it('reads the run_id from INFO server', async () => {
    const info = await connection.info('server');
    expect(parseRunId(info)).toMatch(/^[0-9a-f]{40}$/);
    expect(parseRunId('redis_version:7.0.0\r\n')).toBeUndefined();
  });

  it('keeps batches whose job is still in Redis and lets go of those a writer completed', async () => {
    const { sent, resent, check } = confirmation();
    await check.check();
    const batches = [batchOf(1), batchOf(2), batchOf(3)];
    for (const b of batches) await send(sent, b);
    await check.check();
    expect(sent.records).toBe(6);
    // What removeOnComplete does once a writer has committed the batch.
    await jobs.remove(batches[1]!.id);
    await check.check();
    expect(sent.oldest(10)).toEqual([batches[0], batches[2]]);
    expect(sent.records).toBe(4);
    expect(resent).toEqual([]);
    check.stop();
  });

  it('hands back for re-sending the batches acknowledged before it knew the run_id', async () => {
    const { sent, resent, check } = confirmation();
    const early = batchOf(2);
    await send(sent, early);
    await check.check();
    expect(resent).toEqual([[early]]);
    expect(sent.records).toBe(0);
    check.stop();
  });

  it('asks nothing once stopped', async () => {
    const { sent, resent, check } = confirmation();
    await send(sent, batchOf(1));
    check.stop();
    await check.check();
    expect(resent).toEqual([]);
    expect(sent.records).toBe(1);
  });
});
