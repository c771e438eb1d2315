import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompactRowsWriter, encodeCompactRecordBatch, RECORD_JOB_NAME, RECORD_JOB_OPTIONS, RedisKeys, type AuditEvent, type RecordBatchJobData, type UsageRecord } from '@gateway/shared';
import type { Db } from '../../src/db/connect.js';
import { listAudit } from '../../src/db/audit.js';
import { listUsage } from '../../src/db/usage.js';
import type { PageQuery } from '../../src/db/record-page.js';
import type { Writer } from '../../src/writer/start-writer.js';
import { freshDatabaseUrl, testRedisPrefix, TEST_REDIS_URL, type TestDatabase } from '../../../test-support/databases.js';
import { eventually } from '../../../test-support/processes.js';
import { clearRedisPrefix, createFixture, metricValue, openDatabase, recordsQueue, requestRecords, startTestWriter, type Fixture } from './pipeline-fixtures.js';

/**
 * Batch version 4: the attribution fields (tags, end user, cache writes, cache hits and savings,
 * the response cache's outcome, guardrail decisions) land in their columns, are served by the
 * management API's lists as written, are checked as strictly as the older fields, and records
 * that leave them out read the documented defaults.
 */
describe('writer: attribution fields of batch version 4', () => {
  let db: TestDatabase;
  let sql: Db;
  let fixture: Fixture;
  let keys: RedisKeys;
  let writer: Writer;
  let jobs: ReturnType<typeof recordsQueue>;

  beforeAll(async () => {
    db = freshDatabaseUrl('batchattribution');
    sql = await openDatabase(db.url);
    fixture = await createFixture(sql);
    keys = new RedisKeys(testRedisPrefix('batchattribution'));
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

  function batch(rows: { usage: UsageRecord | null; audit: AuditEvent | null }[]): RecordBatchJobData {
    const segment = new CompactRowsWriter();
    for (const row of rows) segment.add(row.audit, row.usage);
    segment.seal();
    return encodeCompactRecordBatch([segment]);
  }

  async function written(data: RecordBatchJobData): Promise<void> {
    const job = await jobs.queue.add(RECORD_JOB_NAME, data, { ...RECORD_JOB_OPTIONS, jobId: randomUUID() });
    await eventually(async () => (await job.getState()) === 'unknown', 'the batch is written');
  }

  const page: PageQuery = { projectIds: null, order: 'desc', fetch: 1000, after: null, from: undefined, to: undefined };

  it('lands every field and serves it back through the lists', async () => {
    const hit = requestRecords(fixture);
    const guarded = requestRecords(fixture);
    const tags = { team: 'search', feature: 'rag' };
    hit.usage = { ...hit.usage, tokens: { input: 0, output: 0, total: 0 }, cost_usd: 0, tags, end_user: 'user-7', cache_hit: true, saved_usd: 0.0042 };
    hit.audit = { ...hit.audit, tags, end_user: 'user-7', cache: 'hit' };
    guarded.usage = { ...guarded.usage, tokens: { input: 100, output: 3, total: 103, cached: 20, cache_write: 50 }, tags: { team: 'ads' } };
    guarded.audit = {
      ...guarded.audit,
      tags: { team: 'ads' },
      cache: 'miss',
      guardrails: [
        { id: 'pii', stage: 'input', action: 'mask' },
        { id: 'hook', stage: 'output', action: 'flag', failed: true },
      ],
    };
    await written(batch([hit, guarded]));

    const usage = await listUsage(sql, page, {});
    const storedHit = usage.find((r) => r.id === hit.usage.id);
    expect(storedHit).toMatchObject({ tags, end_user: 'user-7', cache_hit: true, saved_usd: 0.0042, cost_usd: 0, tokens: { input: 0, output: 0, total: 0, cached: 0, cache_write: 0 } });
    const storedGuarded = usage.find((r) => r.id === guarded.usage.id);
    expect(storedGuarded).toMatchObject({ tags: { team: 'ads' }, end_user: null, cache_hit: false, saved_usd: null, tokens: { cached: 20, cache_write: 50 } });

    const audit = await listAudit(sql, page, {});
    expect(audit.find((e) => e.id === hit.audit.id)).toMatchObject({ tags, end_user: 'user-7', cache: 'hit', guardrails: [] });
    expect(audit.find((e) => e.id === guarded.audit.id)).toMatchObject({
      tags: { team: 'ads' },
      end_user: null,
      cache: 'miss',
      guardrails: [
        { id: 'pii', stage: 'input', action: 'mask' },
        { id: 'hook', stage: 'output', action: 'flag', failed: true },
      ],
    });
  });

  it('gives records without the fields their defaults', async () => {
    const plain = requestRecords(fixture);
    await written(batch([plain]));
    const [row] = await sql<{ tags: object; end_user: string | null; cache_hit: boolean; saved_usd: string | null; cache_write_tokens: number }[]>`
      select tags, end_user, cache_hit, saved_usd, cache_write_tokens from usage_records where id = ${plain.usage.id}`;
    expect(row).toEqual({ tags: {}, end_user: null, cache_hit: false, saved_usd: null, cache_write_tokens: 0 });
    const [event] = await sql<{ tags: object; end_user: string | null; cache: string | null; guardrails: unknown[] }[]>`
      select tags, end_user, cache, guardrails from audit_events where id = ${plain.audit.id}`;
    expect(event).toEqual({ tags: {}, end_user: null, cache: null, guardrails: [] });
  });

  it('leaves out records whose attribution fields are invalid, and writes the rest', async () => {
    const requests = Array.from({ length: 12 }, () => requestRecords(fixture));
    const badUsage: Record<string, unknown>[] = [
      { tags: 'team=search' },
      { tags: { team: 7 } },
      { tags: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, 'v'])) },
      { end_user: 'u'.repeat(129) },
      { saved_usd: -1 },
      { tokens: { input: 10, output: 1, total: 11, cached: 6, cache_write: 5 } },
    ];
    const badAudit: Record<string, unknown>[] = [
      { cache: 'maybe' },
      { guardrails: [{ id: 'x', stage: 'both', action: 'block' }] },
      { guardrails: [{ id: 'x', stage: 'input', action: 'delete' }] },
      { guardrails: 'pii' },
      { tags: { '': 'v' } },
    ];
    const invalid = async (table: string) => metricValue(writer.metrics, 'gateway_writer_invalid_records_total', { table });
    const before = { usage: await invalid('usage_records'), audit: await invalid('audit_events') };
    // Compact rows carry what the contract types allow; a corrupt value is checked at the writer all the same.
    const rows = requests.map((r, i) => ({
      usage: { ...r.usage, ...(badUsage[i] ?? {}) } as UsageRecord,
      audit: { ...r.audit, ...(badAudit[i] ?? {}) } as AuditEvent,
    }));
    await written(batch(rows));
    expect(await invalid('usage_records')).toBe(before.usage + badUsage.length);
    expect(await invalid('audit_events')).toBe(before.audit + badAudit.length);
    const [{ n } = { n: -1 }] = await sql<{ n: number }[]>`select count(*)::int as n from usage_records where id = any(${sql.array(requests.map((r) => r.usage.id))}::uuid[])`;
    expect(n).toBe(requests.length - badUsage.length);
  });
});
