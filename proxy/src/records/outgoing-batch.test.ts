import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decodeRecordBatch, RECORD_BATCH_VERSION } from '@gateway/shared';
import { encodeBatch, OutgoingBatch } from './outgoing-batch.js';
import { auditEvent, batchOf, requestIds, usageRecord } from './record-fixtures.case.js';

describe('OutgoingBatch', () => {
  it('encodes to the shared batch format, usage and audit apart, each in arrival order', () => {
    const batch = new OutgoingBatch('b');
    batch.add(null, usageRecord(1));
    batch.add(auditEvent(2), null);
    batch.add(null, usageRecord(3));
    batch.add(auditEvent(4), null);
    const decoded = decodeRecordBatch(encodeBatch(batch));
    expect(decoded.usage.map((r) => r.request_id)).toEqual(['req-1', 'req-3']);
    expect(decoded.audit.map((r) => r.request_id)).toEqual(['req-2', 'req-4']);
  });

  it('drops the oldest records whatever their kind, and keeps kinds with their records', () => {
    const batch = new OutgoingBatch('b');
    batch.add(auditEvent(0), null);
    batch.add(null, usageRecord(1));
    batch.add(auditEvent(2), null);
    expect(batch.dropOldest(2)).toBe(2);
    expect(requestIds(batch)).toEqual(['req-2']);
    expect(decodeRecordBatch(encodeBatch(batch)).audit.map((r) => r.request_id)).toEqual(['req-2']);
    expect(batch.dropOldest(5)).toBe(1);
    expect(batch.size).toBe(0);
  });

  it("keeps a request's audit event and usage record in one row, and reads both back", () => {
    const batch = new OutgoingBatch('b');
    const audit = { ...auditEvent(7), project_id: randomUUID(), key_id: randomUUID(), model: 'm', provider: 'p', endpoint: 'chat.completions' as const, attempts: 1, providers: ['p'] };
    const usage = { ...usageRecord(7), id: audit.id, request_id: audit.request_id, project_id: audit.project_id, key_id: audit.key_id, timestamp: audit.timestamp, latency_ms: audit.latency_ms, model: 'm', provider: 'p', cost_usd: 0.0012, endpoint: 'chat.completions' as const };
    batch.add(audit, usage);
    expect(batch.size).toBe(2);
    const decoded = decodeRecordBatch(encodeBatch(batch));
    expect(decoded.v).toBe(RECORD_BATCH_VERSION);
    expect(decoded.audit).toEqual([audit]);
    expect(decoded.usage).toEqual([usage]);
    // A row's two records go together.
    expect(batch.dropOldest(1)).toBe(2);
    expect(batch.size).toBe(0);
  });

  it('counts a record the format cannot carry, and refuses to encode its batch', () => {
    const batch = new OutgoingBatch('b');
    batch.add(null, { ...usageRecord(0), latency_ms: 2n ** 70n as unknown as number });
    batch.add(null, usageRecord(1));
    expect(batch.size).toBe(2);
    expect(() => encodeBatch(batch)).toThrow(/cannot carry/);
  });

  it('holds bytes, shrunk to the rows once sealed', () => {
    const batch = batchOf(3);
    batch.seal();
    expect(batch.bytes).toBeGreaterThan(0);
    expect(batch.bytes).toBeLessThan(3 * 120);
    expect(() => batch.add(null, usageRecord(9))).not.toThrow();
    expect(batch.size).toBe(3 + 1);
  });

  it('appends another batch after its own records', () => {
    const batch = batchOf(2, 0);
    batch.append(batchOf(2, 2));
    expect(requestIds(batch)).toEqual(['req-0', 'req-1', 'req-2', 'req-3']);
  });
});
