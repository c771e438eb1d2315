import { randomUUID } from 'node:crypto';
import { Packr } from 'msgpackr';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeRecordBatch, RECORD_BATCH_VERSION, RedisKeys, type AuditEvent, type UsageRecord } from '@gateway/shared';
import type { Db } from '../../src/db/connect.js';
import type { Writer } from '../../src/writer/start-writer.js';
import { freshDatabaseUrl, testRedisPrefix, TEST_REDIS_URL, type TestDatabase } from '../../../test-support/databases.js';
import { freePort } from '../../../test-support/services.js';
import { RECORD_BACKOFF_TYPE } from '../../src/writer/record-worker.js';
import { clearRedisPrefix, createFixture, exactlyOnce, landedOnce, metricValue, openDatabase, recordsQueue, requestRecords, rowCounts, startTestWriter, type Fixture, type Pushed } from './pipeline-fixtures.js';

// The options the proxy puts on every records job.
const JOB = { attempts: 2 ** 31 - 1, backoff: { type: RECORD_BACKOFF_TYPE, delay: 1_000 }, removeOnComplete: true, removeOnFail: false };

describe('writer: replays and bad input', () => {
  let db: TestDatabase;
  let sql: Db;
  let fixture: Fixture;
  let keys: RedisKeys;
  let writer: Writer;
  let jobs: ReturnType<typeof recordsQueue>;

  beforeAll(async () => {
    db = freshDatabaseUrl('replay');
    sql = await openDatabase(db.url);
    fixture = await createFixture(sql);
    keys = new RedisKeys(testRedisPrefix('replay'));
    jobs = recordsQueue(TEST_REDIS_URL, keys);
  });

  afterAll(async () => {
    await writer?.close();
    await jobs?.close();
    if (keys) await clearRedisPrefix(TEST_REDIS_URL, keys.prefix);
    await sql?.end({ timeout: 1 });
    await db?.drop();
  });

  async function drained(): Promise<void> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const counts = await jobs.queue.getJobCounts('waiting', 'delayed', 'active');
      if ((counts.waiting ?? 0) + (counts.delayed ?? 0) + (counts.active ?? 0) === 0) return;
      if (Date.now() > deadline) throw new Error(`queue never drained: ${JSON.stringify(counts)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  function batch(requests: number): { usage: UsageRecord[]; audit: AuditEvent[]; pushed: Pushed } {
    const usage: UsageRecord[] = [];
    const audit: AuditEvent[] = [];
    for (let i = 0; i < requests; i++) {
      const r = requestRecords(fixture);
      usage.push(r.usage);
      audit.push(r.audit);
    }
    return { usage, audit, pushed: { usage: usage.map((r) => r.id), audit: audit.map((r) => r.id) } };
  }

  it('writes a batch delivered many times, at once and later, exactly once', async () => {
    const { usage, audit, pushed } = batch(250);
    const data = encodeRecordBatch(usage, audit);
    // Five deliveries before any writer runs: with concurrency 4 several are written side by side.
    for (let i = 0; i < 5; i++) await jobs.queue.add('batch', data, { ...JOB, jobId: randomUUID() });
    writer = await startTestWriter({ DATABASE_URL: db.url, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: keys.prefix });
    await drained();
    expect(await exactlyOnce(sql, pushed)).toEqual(landedOnce(pushed));

    // The same batch again after it completed (as when Redis lost the job and the proxy re-sent it).
    await jobs.queue.add('batch', data, { ...JOB, jobId: randomUUID() });
    await drained();
    expect(await exactlyOnce(sql, pushed)).toEqual(landedOnce(pushed));
    expect(await metricValue(writer.metrics, 'gateway_writer_records_written_total', { table: 'usage_records' })).toBe(250);
    expect(await metricValue(writer.metrics, 'gateway_writer_records_replayed_total', { table: 'usage_records' })).toBe(5 * 250);
    expect(await metricValue(writer.metrics, 'gateway_writer_records_replayed_total', { table: 'audit_events' })).toBe(5 * 250);
  });

  it('drops invalid records, counts them, and writes the rest of their batch', async () => {
    const before = await rowCounts(sql);
    const { usage, audit } = batch(10);
    const bad = (r: UsageRecord, change: Record<string, unknown>) => ({ ...r, ...change }) as unknown as UsageRecord;
    usage[0] = bad(usage[0]!, { id: 'not-a-uuid' });
    usage[1] = bad(usage[1]!, { tokens: { input: -1, output: 0, total: -1 } });
    usage[2] = bad(usage[2]!, { finish_reason: 'length' });
    usage[3] = bad(usage[3]!, { timestamp: 1.5 });
    audit[0] = { ...audit[0]!, outcome: 'exploded' } as unknown as AuditEvent;
    audit[1] = { ...audit[1]!, status: 70_000 };
    // Text columns cannot hold NUL; the character is replaced, the event kept.
    audit[2] = { ...audit[2]!, user_agent: 'agent\u0000with-nul' };
    const invalidBefore = await metricValue(writer.metrics, 'gateway_writer_invalid_records_total', { table: 'usage_records' });
    await jobs.queue.add('batch', encodeRecordBatch(usage, audit), { ...JOB, jobId: randomUUID() });
    await drained();
    const after = await rowCounts(sql);
    expect({ usage: after.usage - before.usage, audit: after.audit - before.audit }).toEqual({ usage: 6, audit: 8 });
    expect(await metricValue(writer.metrics, 'gateway_writer_invalid_records_total', { table: 'usage_records' })).toBe(invalidBefore + 4);
    expect(await metricValue(writer.metrics, 'gateway_writer_invalid_records_total', { table: 'audit_events' })).toBe(2);
    const [kept] = await sql<{ user_agent: string }[]>`select user_agent from audit_events where id = ${audit[2]!.id}`;
    expect(kept!.user_agent).toBe('agent\uFFFDwith-nul');
  });

  it('writes row by row when Postgres refuses a record the checks let through, dropping only that one', async () => {
    // A constraint the writer does not know about stands in for any refusal it could not foresee.
    await sql`alter table audit_events add constraint refuses_test_agent check (user_agent is distinct from 'refused-agent')`;
    try {
      const before = await rowCounts(sql);
      const usedBefore = await sql<{ used: string }[]>`select sum(used_tokens)::text as used from projects`;
      const { usage, audit, pushed } = batch(20);
      audit[7] = { ...audit[7]!, user_agent: 'refused-agent' };
      await jobs.queue.add('batch', encodeRecordBatch(usage, audit), { ...JOB, jobId: randomUUID() });
      await drained();
      const after = await rowCounts(sql);
      expect({ usage: after.usage - before.usage, audit: after.audit - before.audit }).toEqual({ usage: 20, audit: 19 });
      const usedAfter = await sql<{ used: string }[]>`select sum(used_tokens)::text as used from projects`;
      expect(Number(usedAfter[0]!.used) - Number(usedBefore[0]!.used)).toBe(usage.reduce((n, r) => n + r.tokens.total, 0));
      expect((await exactlyOnce(sql, { usage: pushed.usage, audit: [] })).usageMissing).toBe(0);
    } finally {
      await sql`alter table audit_events drop constraint refuses_test_agent`;
    }
  });

  it('completes an unreadable batch as invalid, and keeps a batch of a newer format for a newer writer', async () => {
    const garbage = await jobs.queue.add('batch', { b: Buffer.from('not msgpack at all').toString('base64') }, { ...JOB, jobId: randomUUID() });
    const newer = new Packr({ useRecords: false }).pack({ v: RECORD_BATCH_VERSION + 1, usage: [], audit: [], more: true }).toString('base64');
    const future = await jobs.queue.add('batch', { b: newer }, { ...JOB, jobId: randomUUID() });
    const deadline = Date.now() + 10_000;
    while ((await garbage.getState()) !== 'unknown' || (await future.getState()) !== 'delayed') {
      if (Date.now() > deadline) throw new Error(`unexpected states: ${await garbage.getState()} / ${await future.getState()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await metricValue(writer.metrics, 'gateway_writer_invalid_records_total', { table: 'batch' })).toBe(1);
    await future.remove();
  });

  it('answers /healthz, /readyz and /metrics on WRITER_PORT', async () => {
    const port = await freePort();
    const second = await startTestWriter({ DATABASE_URL: db.url, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: keys.prefix, WRITER_PORT: String(port) }, { host: '127.0.0.1' });
    try {
      expect(second.port).toBe(port);
      const base = `http://127.0.0.1:${port}`;
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      const ready = await fetch(`${base}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ postgres: true, redis: true });
      const metrics = await (await fetch(`${base}/metrics`)).text();
      for (const name of [
        'gateway_writer_records_written_total',
        'gateway_writer_invalid_records_total',
        'gateway_writer_batches_retried_total',
        'gateway_writer_queue_depth',
        'gateway_writer_oldest_job_age_seconds',
      ]) {
        expect(metrics).toContain(`# TYPE ${name}`);
      }
      expect((await fetch(`${base}/nope`)).status).toBe(404);
    } finally {
      await second.close();
    }
  });
});
