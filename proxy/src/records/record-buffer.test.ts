import { randomUUID } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, decodeRecordBatch, newRecordId, RedisKeys, type AuditEvent, type UsageRecord } from '@gateway/shared';
import { testRedisPrefix } from '../../../test-support/databases.js';
import { startPrivateRedis, type PrivateRedis } from '../../../test-support/services.js';
import { RECORD_BACKOFF_TYPE } from '@gateway/shared';
import { RecordBuffer } from './record-buffer.js';

const silent = { info() {}, warn() {} };

function usage(n: number): UsageRecord {
  return {
    id: newRecordId(),
    request_id: `req-${n}`,
    project_id: randomUUID(),
    key_id: randomUUID(),
    timestamp: Date.now(),
    model: 'm',
    provider: 'p',
    tokens: { input: 1, output: 2, total: 3 },
    latency_ms: n,
    finish_reason: 'stop',
    stream: false,
  };
}

function audit(n: number): AuditEvent {
  return {
    id: newRecordId(),
    request_id: `req-${n}`,
    timestamp: Date.now(),
    type: 'gateway.request',
    outcome: 'success',
    status: 200,
    error_code: null,
    project_id: null,
    key_id: null,
    actor: null,
    model: null,
    provider: null,
    client_ip: null,
    user_agent: null,
    latency_ms: n,
  };
}

async function metric(registry: Registry, name: string): Promise<number> {
  const found = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  return (found?.values[0]?.value as number | undefined) ?? 0;
}

async function eventually(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Every record in the queue's jobs, by request_id, in job order. */
async function queued(queue: Queue): Promise<{ jobs: number; requestIds: string[]; ids: string[] }> {
  const jobs = await queue.getJobs(['waiting', 'delayed', 'active', 'prioritized'], 0, -1, true);
  const requestIds: string[] = [];
  for (const job of jobs) {
    const batch = decodeRecordBatch(job.data);
    for (const r of [...batch.usage, ...batch.audit]) requestIds.push(r.request_id);
  }
  return { jobs: jobs.length, requestIds, ids: jobs.map((j) => j.id as string) };
}

describe('RecordBuffer', () => {
  let redis: PrivateRedis;
  const opened: { close(): Promise<unknown> }[] = [];

  beforeAll(async () => {
    redis = await startPrivateRedis();
  });

  afterAll(async () => {
    for (const c of opened.reverse()) await c.close().catch(() => {});
    await redis.stop('SIGKILL');
  });

  async function setup(label: string, config: { recordBatchSize: number; recordFlushMs: number; recordBufferMax: number }) {
    const keys = new RedisKeys(testRedisPrefix(label));
    // The proxy's settings for this connection: a send waits out a short outage in the client.
    const connection: Redis = await connectRedis(redis.url, { maxRetriesPerRequest: null });
    const registry = new Registry();
    const buffer = new RecordBuffer({ connection, keys, config, registry, log: silent, confirmIntervalMs: 100 });
    const queueConnection = connection.duplicate();
    queueConnection.on('error', () => {});
    const queue = new Queue(keys.recordsQueue, { connection: queueConnection, prefix: keys.bullPrefix });
    queue.on('error', () => {});
    await queue.waitUntilReady();
    opened.push({ close: () => connection.quit() }, { close: () => queueConnection.quit() }, queue, { close: () => buffer.close(100) });
    return { keys, connection, registry, buffer, queue };
  }

  it('cuts batches of recordBatchSize into jobs with stable ids that a writer never gives up on', async () => {
    const { registry, buffer, queue } = await setup('batches', { recordBatchSize: 500, recordFlushMs: 5, recordBufferMax: 10_000 });
    for (let i = 0; i < 600; i++) {
      buffer.pushUsage(usage(i));
      buffer.pushAudit(audit(i));
    }
    await buffer.flush(5_000);
    expect(buffer.buffered).toBe(0);
    const jobs = await queue.getJobs(['waiting'], 0, -1, true);
    expect(jobs.map((j) => decodeRecordBatch(j.data)).map((b) => b.usage.length + b.audit.length)).toEqual([500, 500, 200]);
    expect(new Set(jobs.map((j) => j.id)).size).toBe(3);
    for (const job of jobs) {
      expect(job.opts.attempts).toBeGreaterThan(1_000_000);
      expect(job.opts.backoff).toMatchObject({ type: RECORD_BACKOFF_TYPE });
      expect(job.opts.removeOnComplete).toBe(true);
    }
    expect(await metric(registry, 'gateway_records_enqueued_total')).toBe(1200);
    expect(await metric(registry, 'gateway_records_dropped_total')).toBe(0);
  });

  it('drops and counts a batch that cannot be encoded, and sends the ones after it', async () => {
    const { registry, buffer, queue } = await setup('unencodable', { recordBatchSize: 2, recordFlushMs: 60_000, recordBufferMax: 1_000 });
    // msgpack has no form for an integer this large; only a bug could put one in a record.
    buffer.pushUsage({ ...usage(0), latency_ms: 2n ** 70n as unknown as number });
    buffer.pushUsage(usage(1));
    buffer.pushUsage(usage(2));
    buffer.pushUsage(usage(3));
    await buffer.flush(5_000);
    expect(buffer.buffered).toBe(0);
    expect((await queued(queue)).requestIds.sort()).toEqual(['req-2', 'req-3']);
    expect(await metric(registry, 'gateway_records_dropped_total')).toBe(2);
    expect(await metric(registry, 'gateway_records_enqueued_total')).toBe(2);
  });

  it('resolves queued() once the records pushed before it are in Redis, however long Redis is away', async () => {
    const { connection, buffer, queue } = await setup('queued', { recordBatchSize: 2, recordFlushMs: 5, recordBufferMax: 10_000 });
    // Three records: a full batch of two, and one in the open batch, cut by its flush timer.
    for (let i = 0; i < 3; i++) buffer.pushUsage(usage(i));
    await buffer.queued();
    expect((await queued(queue)).requestIds.sort()).toEqual(['req-0', 'req-1', 'req-2']);
    await redis.stop('SIGKILL');
    let resolved = false;
    try {
      await eventually(() => connection.status !== 'ready', 'the client notices Redis is gone');
      for (let i = 3; i < 6; i++) buffer.pushAudit(audit(i));
      const waiting = buffer.queued().then(() => (resolved = true));
      // Nothing can have reached a Redis that is not there.
      expect(resolved).toBe(false);
      expect(buffer.buffered).toBe(3);
      await redis.start();
      await waiting;
    } finally {
      if (!resolved) await redis.start().catch(() => {});
    }
    // What queued() waited for is in Redis now (with the first three, which no writer confirmed, sent again).
    expect((await queued(queue)).requestIds).toEqual(expect.arrayContaining(['req-3', 'req-4', 'req-5']));
  });

  it('cuts the open batch for queued() when RECORD_FLUSH_MS is long, rather than wait for it', async () => {
    const { buffer, queue } = await setup('queued-cut', { recordBatchSize: 500, recordFlushMs: 60_000, recordBufferMax: 10_000 });
    buffer.pushUsage(usage(200));
    await buffer.queued();
    expect((await queued(queue)).requestIds).toEqual(['req-200']);
  });

  it('resolves queued() for records whose open batch was merged into the batch waiting before it', async () => {
    const { connection, buffer, queue } = await setup('queued-merged', { recordBatchSize: 10, recordFlushMs: 5, recordBufferMax: 10_000 });
    const waiting = () => (buffer as unknown as { assembler: { waitingBatches(): unknown[]; openBatch(): unknown } }).assembler;
    await redis.stop('SIGKILL');
    let done: Promise<void>;
    try {
      await eventually(() => connection.status !== 'ready', 'the client notices Redis is gone');
      buffer.pushUsage(usage(100));
      await eventually(() => waiting().waitingBatches().length === 1 && waiting().openBatch() === null, 'the first record is cut into a batch that cannot be sent');
      buffer.pushUsage(usage(101));
      done = buffer.queued();
      // The open batch's cut appends it to the unsent one: queued() follows its records there.
      await eventually(() => waiting().openBatch() === null, 'the second record is cut');
      expect(waiting().waitingBatches()).toHaveLength(1);
    } finally {
      await redis.start();
    }
    await done;
    expect((await queued(queue)).requestIds).toEqual(expect.arrayContaining(['req-100', 'req-101']));
  });

  it('holds records while Redis is away, drops the oldest past the bound and counts them', async () => {
    const { connection, registry, buffer, queue } = await setup('bound', { recordBatchSize: 10, recordFlushMs: 1, recordBufferMax: 100 });
    await redis.stop('SIGKILL');
    try {
      await eventually(() => connection.status !== 'ready', 'the client notices Redis is gone');
      for (let i = 0; i < 150; i++) buffer.pushUsage(usage(i));
      await new Promise((r) => setTimeout(r, 50));
      expect(buffer.buffered).toBe(100);
      expect(await metric(registry, 'gateway_records_dropped_total')).toBe(50);
      expect(await metric(registry, 'gateway_records_buffered')).toBe(100);
    } finally {
      await redis.start();
    }
    await eventually(() => connection.status === 'ready', 'the client reconnects');
    await buffer.flush(10_000);
    expect(buffer.buffered).toBe(0);
    const { requestIds } = await queued(queue);
    // The 50 oldest are gone; the 100 newest all arrived, once each.
    expect(requestIds.sort()).toEqual(Array.from({ length: 100 }, (_, i) => `req-${i + 50}`).sort());
    expect(await metric(registry, 'gateway_records_enqueued_total')).toBe(100);
  });

  it('re-sends unconfirmed batches when Redis comes back empty, and releases them once written', async () => {
    const { keys, connection, registry, buffer, queue } = await setup('resend', { recordBatchSize: 10, recordFlushMs: 1, recordBufferMax: 10_000 });
    for (let i = 0; i < 30; i++) buffer.pushAudit(audit(i));
    await buffer.flush(5_000);
    const before = await queued(queue);
    expect(before.jobs).toBe(3);
    // Give the buffer time to learn the run_id the jobs were added under.
    await eventually(async () => (await metric(registry, 'gateway_records_unconfirmed')) === 30, 'records unconfirmed');

    await redis.restart();
    await eventually(async () => (await queued(queue).catch(() => ({ jobs: 0 }))).jobs === 3, 'the jobs are sent again');
    const after = await queued(queue);
    expect(after.ids.sort()).toEqual(before.ids.sort());
    expect(after.requestIds.sort()).toEqual(before.requestIds.sort());
    expect(await metric(registry, 'gateway_records_resent_total')).toBe(30);

    // A writer takes the jobs (removeOnComplete): the buffer lets the records go.
    const workerConnection = connection.duplicate({ maxRetriesPerRequest: null });
    workerConnection.on('error', () => {});
    const worker = new Worker(keys.recordsQueue, async () => {}, { connection: workerConnection, prefix: keys.bullPrefix });
    worker.on('error', () => {});
    try {
      await eventually(async () => (await metric(registry, 'gateway_records_unconfirmed')) === 0, 'records confirmed');
    } finally {
      await worker.close();
      await workerConnection.quit();
    }
    expect((await queued(queue)).jobs).toBe(0);
  });

  it('never throws from push, and counts what close could not send', async () => {
    const { connection, registry, buffer } = await setup('close', { recordBatchSize: 10, recordFlushMs: 1, recordBufferMax: 1_000 });
    await redis.stop('SIGKILL');
    try {
      await eventually(() => connection.status !== 'ready', 'the client notices Redis is gone');
      for (let i = 0; i < 20; i++) buffer.pushUsage(usage(i));
      await buffer.flush(200);
      expect(buffer.buffered).toBe(20);
      await buffer.close(200);
      expect(() => buffer.pushAudit(audit(99))).not.toThrow();
      expect(await metric(registry, 'gateway_records_dropped_total')).toBe(21);
    } finally {
      await redis.start();
    }
  });
});
