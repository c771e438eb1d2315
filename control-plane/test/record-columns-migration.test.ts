import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectDb, type Db } from '../src/db/connect.js';
import { migrate } from '../src/db/migrate.js';
import { ensurePartitions } from '../src/db/partitions.js';
import { freshDatabaseUrl, type TestDatabase } from '../../test-support/databases.js';

/**
 * Migration 0004 on a database that already holds records in monthly partitions, as an upgrade
 * meets it: the columns added to the partitioned parents reach every partition, old and new, and
 * the rows already there read the defaults.
 */
const MIGRATIONS = fileURLToPath(new URL('../migrations/', import.meta.url));
const NEW_USAGE_COLUMNS = [
  ['cached_tokens', 'integer', 'NO', '0'],
  ['cost_usd', 'numeric', 'YES', null],
  ['endpoint', 'text', 'NO', "'chat.completions'::text"],
  ['provider_finish_reason', 'text', 'YES', null],
];
const NEW_AUDIT_COLUMNS = [
  ['attempts', 'smallint', 'NO', '0'],
  ['endpoint', 'text', 'YES', null],
  ['providers', 'ARRAY', 'NO', "'{}'::text[]"],
];

let db: TestDatabase;
let sql: Db;
let before: string;

beforeAll(async () => {
  db = freshDatabaseUrl('migration0004');
  sql = await connectDb(db.url, { createIfMissing: true, max: 1 });
  before = mkdtempSync(join(tmpdir(), 'migrations-'));
  for (const file of readdirSync(MIGRATIONS).filter((f) => f < '0004')) copyFileSync(join(MIGRATIONS, file), join(before, file));
});

afterAll(async () => {
  await sql?.end({ timeout: 1 });
  await db?.drop();
  if (before) rmSync(before, { recursive: true, force: true });
});

async function columns(table: string) {
  return sql<{ column_name: string; data_type: string; is_nullable: string; column_default: string | null }[]>`
    select column_name, data_type, is_nullable, column_default from information_schema.columns
    where table_name = ${table} and column_name in ('cached_tokens', 'cost_usd', 'endpoint', 'provider_finish_reason', 'attempts', 'providers')
    order by column_name`;
}

async function partitionsOf(table: string): Promise<string[]> {
  const rows = await sql<{ name: string }[]>`
    select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent
    where p.relname = ${table} order by 1`;
  return rows.map((r) => r.name);
}

it('adds the columns to every partition, existing and future, and old rows read the defaults', async () => {
  expect((await migrate(sql, before)).applied).toEqual(['0001_init.sql', '0002_project_policies.sql', '0003_account_lifecycle.sql']);
  const now = Date.UTC(2026, 5, 15);
  await ensurePartitions(sql, now);
  // Records of last month, this month, and long ago (the default partition).
  const times = [Date.UTC(2026, 4, 20), now, Date.UTC(2020, 0, 1)];
  const usageIds = times.map(() => randomUUID());
  const auditIds = times.map(() => randomUUID());
  for (const [i, ts] of times.entries()) {
    await sql`
      insert into usage_records (ts, id, request_id, project_id, key_id, model, provider, input_tokens, output_tokens, total_tokens, latency_ms, finish_reason, stream)
      values (${ts}, ${usageIds[i]!}, 'req', ${randomUUID()}, ${randomUUID()}, 'm', 'p', 3, 5, 8, 10, 'stop', false)`;
    await sql`
      insert into audit_events (ts, id, request_id, type, outcome, status, provider, latency_ms)
      values (${ts}, ${auditIds[i]!}, 'req', 'gateway.request', 'success', 200, 'p', 10)`;
  }
  const oldPartitions = await partitionsOf('usage_records');
  expect(oldPartitions).toEqual(expect.arrayContaining(['usage_records_default', 'usage_records_p202605', 'usage_records_p202606']));

  // 0004 first; later migrations follow it.
  expect((await migrate(sql)).applied[0]).toBe('0004_record_costs_and_attempts.sql');
  // Partitions made after the migration, as the control plane's upkeep makes them.
  await ensurePartitions(sql, Date.UTC(2027, 0, 10));
  const usagePartitions = await partitionsOf('usage_records');
  const auditPartitions = await partitionsOf('audit_events');
  expect(usagePartitions).toEqual(expect.arrayContaining([...oldPartitions, 'usage_records_p202701']));

  const shape = (rows: Awaited<ReturnType<typeof columns>>) => rows.map((r) => [r.column_name, r.data_type, r.is_nullable, r.column_default]);
  for (const table of ['usage_records', ...usagePartitions]) expect(shape(await columns(table)), table).toEqual(NEW_USAGE_COLUMNS);
  for (const table of ['audit_events', ...auditPartitions]) expect(shape(await columns(table)), table).toEqual(NEW_AUDIT_COLUMNS);
  const [precision] = await sql<{ p: number; s: number }[]>`
    select numeric_precision as p, numeric_scale as s from information_schema.columns where table_name = 'usage_records_p202605' and column_name = 'cost_usd'`;
  expect(precision).toEqual({ p: 20, s: 10 });

  const oldUsage = await sql`select cached_tokens, cost_usd, endpoint, provider_finish_reason from usage_records where id = any(${usageIds}::uuid[])`;
  expect(oldUsage).toEqual(times.map(() => ({ cached_tokens: 0, cost_usd: null, endpoint: 'chat.completions', provider_finish_reason: null })));
  const oldAudit = await sql`select endpoint, attempts, providers from audit_events where id = any(${auditIds}::uuid[])`;
  expect(oldAudit).toEqual(times.map(() => ({ endpoint: null, attempts: 0, providers: [] })));

  // A new record in a partition made before the migration and in one made after it.
  for (const ts of [Date.UTC(2026, 4, 21), Date.UTC(2027, 0, 11)]) {
    const id = randomUUID();
    await sql`
      insert into usage_records (ts, id, request_id, project_id, key_id, model, provider, input_tokens, output_tokens, total_tokens,
                                 cached_tokens, cost_usd, latency_ms, finish_reason, provider_finish_reason, stream, endpoint)
      values (${ts}, ${id}, 'req', ${randomUUID()}, ${randomUUID()}, 'm', 'p', 3, 5, 8, 2, 0.0000125, 10, 'other', 'pause_turn', false, 'messages')`;
    const [row] = await sql`select tableoid::regclass::text as part, cached_tokens, cost_usd::text as cost, endpoint from usage_records where id = ${id}`;
    expect(row).toEqual({ part: `usage_records_p${new Date(ts).getUTCFullYear()}${String(new Date(ts).getUTCMonth() + 1).padStart(2, '0')}`, cached_tokens: 2, cost: '0.0000125000', endpoint: 'messages' });
  }
});
