import { randomUUID } from 'node:crypto';
import type { Job } from 'bullmq';
import { Packr } from 'msgpackr';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeRecordBatch, RECORD_JOB_NAME, RECORD_JOB_OPTIONS, RedisKeys, type AuditEvent, type RecordBatchJobData, type UsageRecord } from '@gateway/shared';
import type { Db } from '../../src/db/connect.js';
import type { Writer } from '../../src/writer/start-writer.js';
import { freshDatabaseUrl, testRedisPrefix, TEST_REDIS_URL, type TestDatabase } from '../../../test-support/databases.js';
import { clearRedisPrefix, createFixture, metricValue, openDatabase, recordsQueue, requestRecords, startTestWriter, type Fixture } from './pipeline-fixtures.js';

/**
 * Batch versions 1 and 2 side by side: a writer lands both with the right columns (the defaults
 * of version 1, the new fields of version 2), checks the new fields as strictly as the old ones,
 * and a writer of the previous release hands a version 2 batch back to BullMQ until a writer
 * that reads it takes it (the rolling upgrade of docs/pipeline.md).
 */
interface UsageColumns {
  id: string;
  input_tokens: number;
  cached_tokens: number;
  cost_usd: string | null;
  endpoint: string;
  finish_reason: string;
  provider_finish_reason: string | null;
}

interface AuditColumns {
  id: string;
  provider: string | null;
  endpoint: string | null;
  attempts: number;
  providers: string[];
}

/** A batch as the proxy of the previous release packed it. */
function v1Batch(usage: object[], audit: object[]): RecordBatchJobData {
  return { b: new Packr({ useRecords: true, moreTypes: false }).pack({ v: 1, usage, audit }).toString('base64') };
}

/** The two records of a request without any field version 2 added, as a v1 proxy made them. */
function v1Records(fixture: Fixture): { usage: UsageRecord; audit: AuditEvent } {
  // The fixture fills every field; a version 1 proxy knew none of the new ones.
  const { usage, audit } = requestRecords(fixture);
  const { cost_usd: _cost, provider_finish_reason: _raw, endpoint: _usageEndpoint, ...oldUsage } = usage;
  const { endpoint: _endpoint, attempts: _attempts, providers: _providers, ...oldAudit } = audit;
  const { cached: _cached, ...tokens } = usage.tokens;
  return { usage: { ...oldUsage, tokens }, audit: oldAudit };
}

/** The same request as a version 2 proxy records it, fallback and price included. */
function v2Records(fixture: Fixture, n: number): { usage: UsageRecord; audit: AuditEvent } {
  const { usage, audit } = requestRecords(fixture);
  return {
    usage: {
      ...usage,
      tokens: { ...usage.tokens, cached: Math.min(usage.tokens.input, n) },
      cost_usd: 0.000_012_5 * (n + 1),
      endpoint: 'messages',
      finish_reason: 'other',
      provider_finish_reason: 'pause_turn',
    },
    audit: { ...audit, endpoint: 'messages', attempts: 2, providers: ['flaky', 'mock'] },
  };
}

describe('writer: record batch versions', () => {
  let db: TestDatabase;
  let sql: Db;
  let fixture: Fixture;
  let keys: RedisKeys;
  let writer: Writer;
  let jobs: ReturnType<typeof recordsQueue>;

  beforeAll(async () => {
    db = freshDatabaseUrl('batchversions');
    sql = await openDatabase(db.url);
    fixture = await createFixture(sql);
    keys = new RedisKeys(testRedisPrefix('batchversions'));
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

  /** Adds a job and resolves once it completed (completed jobs are removed). */
  async function written(data: RecordBatchJobData, queue = jobs.queue): Promise<void> {
    const job = await queue.add(RECORD_JOB_NAME, data, { ...RECORD_JOB_OPTIONS, jobId: randomUUID() });
    await gone(job);
  }

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

  const usageColumns = (ids: string[]) =>
    sql<UsageColumns[]>`
      select id, input_tokens, cached_tokens, cost_usd::text, endpoint, finish_reason, provider_finish_reason
      from usage_records where id = any(${sql.array(ids)}::uuid[]) order by id`;
  const auditColumns = (ids: string[]) =>
    sql<AuditColumns[]>`select id, provider, endpoint, attempts, providers from audit_events where id = any(${sql.array(ids)}::uuid[]) order by id`;
  const byId = <T extends { id: string }>(rows: T[]) => [...rows].sort((a, b) => (a.id < b.id ? -1 : 1));

  it('lands a version 1 batch with the defaults of its version', async () => {
    const requests = [v1Records(fixture), v1Records(fixture)];
    // A v1 event of a request that never reached a provider.
    const refused: AuditEvent = { ...requests[1]!.audit, id: randomUUID(), provider: null, model: null, outcome: 'auth_failed', status: 401 };
    const audit = [...requests.map((r) => r.audit), refused];
    await written(v1Batch(requests.map((r) => r.usage), audit));

    expect(await usageColumns(requests.map((r) => r.usage.id))).toEqual(
      byId(
        requests.map((r) => ({
          id: r.usage.id,
          input_tokens: r.usage.tokens.input,
          cached_tokens: 0,
          cost_usd: null,
          endpoint: 'chat.completions',
          finish_reason: 'stop',
          provider_finish_reason: null,
        })),
      ),
    );
    expect(await auditColumns(audit.map((e) => e.id))).toEqual(
      byId([
        ...requests.map((r) => ({ id: r.audit.id, provider: 'mock', endpoint: 'chat.completions', attempts: 1, providers: ['mock'] })),
        { id: refused.id, provider: null, endpoint: 'chat.completions', attempts: 0, providers: [] },
      ]),
    );
  });

  it('reads no version 2 field from a version 1 record', async () => {
    const { usage, audit } = v2Records(fixture, 3);
    await written(v1Batch([usage], [audit]));
    expect(await usageColumns([usage.id])).toEqual([
      { id: usage.id, input_tokens: usage.tokens.input, cached_tokens: 0, cost_usd: null, endpoint: 'chat.completions', finish_reason: 'other', provider_finish_reason: null },
    ]);
    expect(await auditColumns([audit.id])).toEqual([{ id: audit.id, provider: 'mock', endpoint: 'chat.completions', attempts: 1, providers: ['mock'] }]);
  });

  it('lands a version 2 batch with its new fields, costs exact', async () => {
    const requests = [0, 1, 2].map((n) => v2Records(fixture, n));
    // A request no provider was tried for, and a cost too small for one but not for ten digits.
    requests[2]!.audit = { ...requests[2]!.audit, endpoint: null, attempts: 0, providers: [], provider: null };
    requests[2]!.usage = { ...requests[2]!.usage, cost_usd: 1e-7, endpoint: 'embeddings', finish_reason: 'stop', provider_finish_reason: null };
    await written(encodeRecordBatch(requests.map((r) => r.usage), requests.map((r) => r.audit)));

    expect(await usageColumns(requests.map((r) => r.usage.id))).toEqual(
      byId([
        { ...pick(requests[0]!.usage), cached_tokens: 0, cost_usd: '0.0000125000', endpoint: 'messages', finish_reason: 'other', provider_finish_reason: 'pause_turn' },
        { ...pick(requests[1]!.usage), cached_tokens: 1, cost_usd: '0.0000250000', endpoint: 'messages', finish_reason: 'other', provider_finish_reason: 'pause_turn' },
        { ...pick(requests[2]!.usage), cached_tokens: Math.min(2, requests[2]!.usage.tokens.input), cost_usd: '0.0000001000', endpoint: 'embeddings', finish_reason: 'stop', provider_finish_reason: null },
      ]),
    );
    expect(await auditColumns(requests.map((r) => r.audit.id))).toEqual(
      byId([
        { id: requests[0]!.audit.id, provider: 'mock', endpoint: 'messages', attempts: 2, providers: ['flaky', 'mock'] },
        { id: requests[1]!.audit.id, provider: 'mock', endpoint: 'messages', attempts: 2, providers: ['flaky', 'mock'] },
        { id: requests[2]!.audit.id, provider: null, endpoint: null, attempts: 0, providers: [] },
      ]),
    );
  });

  function pick(usage: UsageRecord) {
    return { id: usage.id, input_tokens: usage.tokens.input };
  }

  it('gives a version 2 record that leaves the new fields out their defaults', async () => {
    // What a proxy that writes version 2 but does not fill the new fields yet sends.
    const { usage, audit } = v1Records(fixture);
    await written(encodeRecordBatch([usage], [audit]));
    expect(await usageColumns([usage.id])).toEqual([
      { id: usage.id, input_tokens: usage.tokens.input, cached_tokens: 0, cost_usd: null, endpoint: 'chat.completions', finish_reason: 'stop', provider_finish_reason: null },
    ]);
    expect(await auditColumns([audit.id])).toEqual([{ id: audit.id, provider: 'mock', endpoint: 'chat.completions', attempts: 1, providers: ['mock'] }]);
  });

  it('drops records whose new fields are invalid, counts them, and writes the rest of the batch', async () => {
    const requests = Array.from({ length: 20 }, (_, n) => v2Records(fixture, n));
    const usage: unknown[] = requests.map((r) => r.usage);
    const audit: unknown[] = requests.map((r) => r.audit);
    const badUsage: Record<string, unknown>[] = [
      { cost_usd: -0.01 },
      { cost_usd: Number.NaN },
      { cost_usd: Number.POSITIVE_INFINITY },
      { cost_usd: 1e10 },
      { cost_usd: '0.01' },
      { tokens: { input: 3, output: 1, total: 4, cached: 4 } },
      { tokens: { input: 3, output: 1, total: 4, cached: -1 } },
      { tokens: { input: 3, output: 1, total: 4, cached: 1.5 } },
      { endpoint: 'completions' },
      { endpoint: null },
      { provider_finish_reason: 7 },
    ];
    const badAudit: Record<string, unknown>[] = [
      { attempts: 1001 },
      { attempts: -1 },
      { attempts: 1.5 },
      { providers: Array.from({ length: 21 }, (_, i) => `p${i}`) },
      { providers: ['x'.repeat(65)] },
      { providers: [''] },
      { providers: 'mock' },
      { providers: [42] },
      { endpoint: 'completions' },
    ];
    badUsage.forEach((change, i) => (usage[i] = { ...(usage[i] as object), ...change }));
    badAudit.forEach((change, i) => (audit[i] = { ...(audit[i] as object), ...change }));
    // At the limits, and NUL characters, which text columns cannot hold: kept, NUL replaced.
    const edge = 19;
    usage[edge] = { ...(usage[edge] as object), cost_usd: 9_999_999_999.5, provider_finish_reason: 'odd\u0000reason' };
    audit[edge] = { ...(audit[edge] as object), attempts: 1000, providers: [...Array.from({ length: 19 }, (_, i) => `p${i}`), 'n\u0000ul'.padEnd(64, 'x')] };

    const invalid = async (table: string) => metricValue(writer.metrics, 'gateway_writer_invalid_records_total', { table });
    const before = { usage: await invalid('usage_records'), audit: await invalid('audit_events') };
    await written(encodeRecordBatch(usage as UsageRecord[], audit as AuditEvent[]));

    const landedUsage = await usageColumns(requests.map((r) => r.usage.id));
    const landedAudit = await auditColumns(requests.map((r) => r.audit.id));
    expect(landedUsage.map((r) => r.id).sort()).toEqual(requests.slice(badUsage.length).map((r) => r.usage.id).sort());
    expect(landedAudit.map((r) => r.id).sort()).toEqual(requests.slice(badAudit.length).map((r) => r.audit.id).sort());
    expect(await invalid('usage_records')).toBe(before.usage + badUsage.length);
    expect(await invalid('audit_events')).toBe(before.audit + badAudit.length);
    const edgeUsage = landedUsage.find((r) => r.id === requests[edge]!.usage.id);
    expect(edgeUsage).toMatchObject({ cost_usd: '9999999999.5000000000', provider_finish_reason: 'odd\uFFFDreason' });
    const edgeAudit = landedAudit.find((r) => r.id === requests[edge]!.audit.id);
    expect(edgeAudit?.attempts).toBe(1000);
    expect(edgeAudit?.providers).toHaveLength(20);
    expect(edgeAudit?.providers[19]).toBe('n\uFFFDul'.padEnd(64, 'x'));
  });

  it('keeps provider names with quotes, commas and braces as they were', async () => {
    const { usage, audit } = v2Records(fixture, 1);
    const names = ['a "quoted" one', 'back\\slash', 'comma,brace}{', 'NULL', ' spaced '];
    await written(encodeRecordBatch([usage], [{ ...audit, providers: names, attempts: 5 }]));
    expect((await auditColumns([audit.id]))[0]?.providers).toEqual(names);
  });

  it('a writer of the previous release hands a version 2 batch back until a newer writer takes it', { timeout: 60_000 }, async () => {
    const upgradeKeys = new RedisKeys(testRedisPrefix('upgrade'));
    const queue = recordsQueue(TEST_REDIS_URL, upgradeKeys);
    const env = { DATABASE_URL: db.url, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: upgradeKeys.prefix };
    // Only version 1, as the writers before this change read; its backoff shortened for the test.
    const oldWriter = await startTestWriter(env, { batchVersions: [1], maxBackoffMs: 100 });
    let newWriter: Writer | undefined;
    try {
      const { usage, audit } = v2Records(fixture, 4);
      const job = await queue.queue.add(RECORD_JOB_NAME, encodeRecordBatch([usage], [audit]), { ...RECORD_JOB_OPTIONS, jobId: randomUUID() });
      // The old writer still writes what it knows meanwhile.
      const old = v1Records(fixture);
      await written(v1Batch([old.usage], [old.audit]), queue.queue);
      expect(await usageColumns([old.usage.id])).toHaveLength(1);

      // Refused again and again, never failed for good, nothing written.
      const deadline = Date.now() + 20_000;
      for (;;) {
        const seen = await queue.queue.getJob(job.id as string);
        expect(seen, 'the batch is still in the queue').toBeDefined();
        expect(await seen!.getState()).not.toBe('failed');
        if (seen!.attemptsMade >= 3) break;
        if (Date.now() > deadline) throw new Error(`the old writer tried the batch ${seen!.attemptsMade} times`);
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(await usageColumns([usage.id])).toEqual([]);
      expect(await metricValue(oldWriter.metrics, 'gateway_writer_invalid_records_total', { table: 'batch' })).toBe(0);

      newWriter = await startTestWriter(env);
      await gone(job);
      expect(await usageColumns([usage.id])).toMatchObject([{ id: usage.id, endpoint: 'messages', cost_usd: '0.0000625000' }]);
      expect(await auditColumns([audit.id])).toMatchObject([{ id: audit.id, attempts: 2, providers: ['flaky', 'mock'] }]);
    } finally {
      await oldWriter.close();
      await newWriter?.close();
      await queue.close();
      await clearRedisPrefix(TEST_REDIS_URL, upgradeKeys.prefix);
    }
  });
});
