import { randomUUID } from 'node:crypto';
import type { Job } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompactRowsWriter, encodeCompactRecordBatch, encodeRecordBatch, RECORD_JOB_NAME, RECORD_JOB_OPTIONS, RedisKeys, type AuditEvent, type RecordBatchJobData, type UsageRecord } from '@gateway/shared';
import type { Db } from '../../src/db/connect.js';
import type { Writer } from '../../src/writer/start-writer.js';
import { freshDatabaseUrl, testRedisPrefix, TEST_REDIS_URL, type TestDatabase } from '../../../test-support/databases.js';
import { clearRedisPrefix, createFixture, openDatabase, recordsQueue, requestRecords, startTestWriter, type Fixture } from './pipeline-fixtures.js';

/**
 * Batch version 3 (compact rows, as proxies now send): the writer splits each row into the usage
 * record and audit event it carries and stores exactly what the same records store as a version 2
 * batch; a writer of the previous release (versions 1 and 2) hands a version 3 batch back until a
 * writer that reads it takes it.
 */
function compact(requests: { usage: UsageRecord | null; audit: AuditEvent | null }[]): RecordBatchJobData {
  const rows = new CompactRowsWriter();
  for (const r of requests) rows.add(r.audit, r.usage);
  return encodeCompactRecordBatch([rows]);
}

describe('writer: compact record batches', () => {
  let db: TestDatabase;
  let sql: Db;
  let fixture: Fixture;
  let keys: RedisKeys;
  let writer: Writer;
  let jobs: ReturnType<typeof recordsQueue>;

  beforeAll(async () => {
    db = freshDatabaseUrl('compactbatches');
    sql = await openDatabase(db.url);
    fixture = await createFixture(sql);
    keys = new RedisKeys(testRedisPrefix('compactbatches'));
    jobs = recordsQueue(TEST_REDIS_URL, keys);
    writer = await startTestWriter({ DATABASE_URL: db.url, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: keys.prefix });
  });

  afterAll(async () => {
    await writer?.close();
    await jobs?.close();
    if (keys) await clearRedisPrefix(TEST_REDIS_URL, keys.prefix);
    await sql?.end({ timeout: 1 });
    await db?.drop();
  });

  async function gone(job: Job, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const state = await job.getState();
      if (state === 'unknown') return;
      if (state === 'failed') throw new Error(`job ${job.id} failed: ${job.failedReason}`);
      if (Date.now() > deadline) throw new Error(`job ${job.id} still ${state}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async function written(data: RecordBatchJobData, queue = jobs.queue): Promise<void> {
    await gone(await queue.add(RECORD_JOB_NAME, data, { ...RECORD_JOB_OPTIONS, jobId: randomUUID() }));
  }

  const usageRows = (ids: string[]) =>
    sql`select id, request_id, project_id, key_id, ts, model, provider, input_tokens, output_tokens, total_tokens, cached_tokens, cost_usd::text, latency_ms, finish_reason, provider_finish_reason, stream, endpoint
        from usage_records where id = any(${sql.array(ids)}::uuid[]) order by id`;
  const auditRows = (ids: string[]) =>
    sql`select id, request_id, ts, type, outcome, status, error_code, project_id, key_id, actor, model, provider, endpoint, attempts, providers, client_ip, user_agent, latency_ms
        from audit_events where id = any(${sql.array(ids)}::uuid[]) order by id`;
  const withoutId = (rows: Record<string, unknown>[]) => rows.map(({ id: _id, request_id: _r, ...rest }) => rest);

  it('stores what the same records store as a version 2 batch, refusals and fallbacks included', async () => {
    const make = () => {
      const requests: { usage: UsageRecord | null; audit: AuditEvent | null }[] = [];
      for (let n = 0; n < 40; n++) {
        const { usage, audit } = requestRecords(fixture);
        if (n % 4 === 1) requests.push({ usage: null, audit: { ...audit, outcome: 'auth_failed', status: 401, error_code: 'UNAUTHORIZED', project_id: null, key_id: null, model: null, provider: null, attempts: 0, providers: [] } });
        else if (n % 4 === 2) requests.push({ usage: { ...usage, finish_reason: 'other', provider_finish_reason: 'pause_turn' }, audit: { ...audit, attempts: 2, providers: ['flaky', 'mock'], user_agent: 'agent "quoted", ünïcode' } });
        else requests.push({ usage, audit });
      }
      return requests;
    };
    const viaV3 = make();
    const viaV2 = make();
    // The same records but for their ids and times, which the comparison leaves out.
    for (let i = 0; i < viaV2.length; i++) {
      const a = viaV3[i]!;
      const b = viaV2[i]!;
      if (b.audit && a.audit) b.audit = { ...a.audit, id: b.audit.id, request_id: b.audit.request_id };
      if (b.usage && a.usage) b.usage = { ...a.usage, id: b.usage.id, request_id: b.usage.request_id };
    }
    await written(compact(viaV3));
    await written(encodeRecordBatch(viaV2.flatMap((r) => (r.usage ? [r.usage] : [])), viaV2.flatMap((r) => (r.audit ? [r.audit] : []))));
    const ids = (rs: typeof viaV3, k: 'usage' | 'audit') => rs.flatMap((r) => (r[k] ? [r[k]!.id] : []));
    const order = <T extends Record<string, unknown>>(rows: T[], ids: string[]) => ids.map((id) => rows.find((r) => r.id === id)!);
    const u3 = order(await usageRows(ids(viaV3, 'usage')), ids(viaV3, 'usage'));
    const u2 = order(await usageRows(ids(viaV2, 'usage')), ids(viaV2, 'usage'));
    expect(u3).toHaveLength(30);
    expect(withoutId(u3)).toEqual(withoutId(u2));
    const a3 = order(await auditRows(ids(viaV3, 'audit')), ids(viaV3, 'audit'));
    const a2 = order(await auditRows(ids(viaV2, 'audit')), ids(viaV2, 'audit'));
    expect(a3).toHaveLength(40);
    expect(withoutId(a3)).toEqual(withoutId(a2));
    expect(a3.map((r) => r.request_id)).toEqual(viaV3.map((r) => r.audit!.request_id));
  });

  it('a writer of the previous release hands a version 3 batch back until a newer writer takes it', { timeout: 60_000 }, async () => {
    const upgradeKeys = new RedisKeys(testRedisPrefix('upgrade3'));
    const queue = recordsQueue(TEST_REDIS_URL, upgradeKeys);
    const env = { DATABASE_URL: db.url, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: upgradeKeys.prefix };
    const oldWriter = await startTestWriter(env, { batchVersions: [1, 2], maxBackoffMs: 100 });
    let newWriter: Writer | undefined;
    try {
      const { usage, audit } = requestRecords(fixture);
      const job = await queue.queue.add(RECORD_JOB_NAME, compact([{ usage, audit }]), { ...RECORD_JOB_OPTIONS, jobId: randomUUID() });
      // The old writer still writes a version 2 batch meanwhile.
      const old = requestRecords(fixture);
      await written(encodeRecordBatch([old.usage], [old.audit]), queue.queue);
      expect(await usageRows([old.usage.id])).toHaveLength(1);
      const deadline = Date.now() + 20_000;
      for (;;) {
        const seen = await queue.queue.getJob(job.id as string);
        expect(seen, 'the batch is still in the queue').toBeDefined();
        expect(await seen!.getState()).not.toBe('failed');
        if (seen!.attemptsMade >= 3) break;
        if (Date.now() > deadline) throw new Error(`the old writer tried the batch ${seen!.attemptsMade} times`);
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(await usageRows([usage.id])).toEqual([]);
      newWriter = await startTestWriter(env);
      await gone(job);
      expect(await usageRows([usage.id])).toHaveLength(1);
      expect(await auditRows([audit.id])).toHaveLength(1);
    } finally {
      await oldWriter.close();
      await newWriter?.close();
      await queue.close();
      await clearRedisPrefix(TEST_REDIS_URL, upgradeKeys.prefix);
    }
  });
});
