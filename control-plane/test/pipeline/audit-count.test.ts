import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRecordId, type AuditEvent } from '@gateway/shared';
import type { Db } from '../../src/db/connect.js';
import { writeBatch } from '../../src/writer/batch-writer.js';
import { addAuditRows, emptyAuditRows, emptyUsageRows } from '../../src/writer/record-rows.js';
import { freshDatabaseUrl, type TestDatabase } from '../../../test-support/databases.js';
import { openDatabase } from './pipeline-fixtures.js';

/**
 * Batch version 3: an audit event says how many requests it stands for. A `gateway.throttled`
 * event from the proxy carries the requests its throttle refused from one address in one second;
 * older versions, and events that leave it out, are one request each.
 */
let db: TestDatabase;
let sql: Db;

beforeAll(async () => {
  db = freshDatabaseUrl('audit_count');
  sql = await openDatabase(db.url);
});

afterAll(async () => {
  await sql?.end({ timeout: 1 });
  await db?.drop();
});

function throttled(count: unknown): AuditEvent {
  const id = newRecordId();
  return {
    id,
    request_id: id,
    timestamp: Date.now(),
    type: 'gateway.throttled',
    outcome: 'auth_failed',
    status: 429,
    error_code: 'RATE_LIMITED',
    project_id: null,
    key_id: null,
    actor: null,
    model: null,
    provider: null,
    endpoint: null,
    attempts: 0,
    providers: [],
    client_ip: '203.0.113.9',
    user_agent: 'flood/1.0',
    latency_ms: 0,
    count: count as number,
  };
}

async function storedCount(id: string): Promise<number | undefined> {
  const [row] = await sql<{ count: number }[]>`select count from audit_events where id = ${id}`;
  return row?.count;
}

describe('audit_events.count', () => {
  it('stores the count of a version 3 event, 1 for older versions and for events without one', async () => {
    const many = throttled(41);
    const older = throttled(41);
    const { count: _, ...plain } = throttled(1);
    const v3 = emptyAuditRows();
    expect(addAuditRows(v3, [many, plain], 3)).toEqual([]);
    const v2 = emptyAuditRows();
    expect(addAuditRows(v2, [older], 2)).toEqual([]);
    await writeBatch(sql, emptyUsageRows(), v3);
    await writeBatch(sql, emptyUsageRows(), v2);
    expect(await storedCount(many.id)).toBe(41);
    expect(await storedCount(plain.id)).toBe(1);
    expect(await storedCount(older.id)).toBe(1);
  });

  it('leaves out an event whose count is not a positive integer', () => {
    for (const bad of [0, -1, 1.5, '3', 2 ** 31]) {
      const rows = emptyAuditRows();
      const event = throttled(bad);
      expect(addAuditRows(rows, [event], 3)).toEqual([{ table: 'audit_events', id: event.id, reason: expect.stringMatching(/count/) }]);
      expect(rows.id).toHaveLength(0);
      expect(rows.count).toHaveLength(0);
    }
  });
});
