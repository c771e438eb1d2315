import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEvent, AuditOutcome } from '@gateway/shared';
import type { Db } from '../../src/db/connect.js';
import { writeBatch } from '../../src/writer/batch-writer.js';
import { addAuditRows, addUsageRows, emptyAuditRows, emptyUsageRows } from '../../src/writer/record-rows.js';
import { freshDatabaseUrl, type TestDatabase } from '../../../test-support/databases.js';
import { createFixture, openDatabase, requestRecords, type Fixture } from './pipeline-fixtures.js';

/**
 * A key's last use is its last served request. The documented rotation (create the new key, wait
 * until the old one is no longer used, delete it) reads it: a deleted key whose clients still try
 * it must not look in use because the gateway refused them.
 */
let db: TestDatabase;
let sql: Db;
let fixture: Fixture;

beforeAll(async () => {
  db = freshDatabaseUrl('key_last_used');
  sql = await openDatabase(db.url);
  fixture = await createFixture(sql, 1, 1);
});

afterAll(async () => {
  await sql?.end({ timeout: 1 });
  await db?.drop();
});

async function lastUsed(keyId: string): Promise<number | null> {
  const [row] = await sql<{ last_used_at: Date | null }[]>`select last_used_at from api_keys where id = ${keyId}`;
  return row!.last_used_at?.getTime() ?? null;
}

function refused(base: AuditEvent, outcome: AuditOutcome, timestamp: number): AuditEvent {
  return { ...base, id: `${base.id.slice(0, -4)}ffff`, request_id: `${base.request_id}-refused`, outcome, status: 401, error_code: 'UNAUTHORIZED', provider: null, timestamp };
}

describe('api_keys.last_used_at', () => {
  it('moves for a served request and not for refused ones that arrive later', async () => {
    const { usage, audit } = requestRecords(fixture);
    const keyId = usage.key_id;
    const served = audit.timestamp;
    const usageRows = emptyUsageRows();
    const auditRows = emptyAuditRows();
    expect(addUsageRows(usageRows, [usage], 2)).toEqual([]);
    expect(addAuditRows(auditRows, [audit], 2)).toEqual([]);
    await writeBatch(sql, usageRows, auditRows);
    expect(await lastUsed(keyId)).toBe(served);

    // The key was deleted; its clients keep trying, and the proxy still names it in the refusals.
    const later = emptyAuditRows();
    expect(addAuditRows(later, [refused(audit, 'auth_failed', served + 60_000)], 2)).toEqual([]);
    const result = await writeBatch(sql, emptyUsageRows(), later);
    expect(result.auditInserted).toBe(1);
    expect(await lastUsed(keyId)).toBe(served);
  });
});
