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
 * Migration 0005 on a database that already holds usage: the month counts a monthly quota's
 * thresholds are judged by start from the records of the current month, and from nothing else.
 */
const MIGRATIONS = fileURLToPath(new URL('../migrations/', import.meta.url));
let db: TestDatabase;
let sql: Db;
let before: string;

beforeAll(async () => {
  db = freshDatabaseUrl('migration0005');
  sql = await connectDb(db.url, { createIfMissing: true, max: 1 });
  before = mkdtempSync(join(tmpdir(), 'migrations-'));
  for (const file of readdirSync(MIGRATIONS).filter((f) => f < '0005')) copyFileSync(join(MIGRATIONS, file), join(before, file));
});

afterAll(async () => {
  await sql?.end({ timeout: 1 });
  await db?.drop();
  if (before) rmSync(before, { recursive: true, force: true });
});

it("counts the current month's usage per project when it adds the month counts", async () => {
  await migrate(sql, before);
  const now = new Date();
  await ensurePartitions(sql, now.getTime());
  const [project] = await sql<{ id: string }[]>`insert into projects (name, quota_tokens, quota_period) values ('monthly', 1000, 'month') returning id`;
  const thisMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1, 0, 0, 1);
  const lastMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1) - 1;
  for (const [ts, tokens] of [
    [thisMonth, 300],
    [now.getTime(), 40],
    [lastMonth, 5000],
  ] as const) {
    await sql`
      insert into usage_records (ts, id, request_id, project_id, key_id, model, provider, input_tokens, output_tokens, total_tokens, latency_ms, finish_reason, stream)
      values (${ts}, ${randomUUID()}, 'req', ${project!.id}, ${randomUUID()}, 'm', 'p', ${tokens}, 0, ${tokens}, 10, 'stop', false)`;
  }
  expect((await migrate(sql)).applied[0]).toBe('0005_webhooks.sql');
  const period = `m${now.getUTCFullYear()}${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
  expect(await sql`select project_id, period, used_tokens::int as used_tokens from project_usage_periods`).toEqual([
    { project_id: project!.id, period, used_tokens: 340 },
  ]);
});
