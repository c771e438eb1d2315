import { describe, expect, it } from 'vitest';
import { decodeRecordBatch } from '@gateway/shared';
import { encodeBatch, OutgoingBatch } from './outgoing-batch.js';
import { AUDIT, auditEvent, batchOf, requestIds, USAGE, usageRecord } from './record-fixtures.case.js';

describe('OutgoingBatch', () => {
  it('encodes to the shared batch format, usage and audit apart, each in arrival order', () => {
    const batch = new OutgoingBatch('b');
    batch.add(USAGE, usageRecord(1));
    batch.add(AUDIT, auditEvent(2));
    batch.add(USAGE, usageRecord(3));
    batch.add(AUDIT, auditEvent(4));
    const decoded = decodeRecordBatch(encodeBatch(batch));
    expect(decoded.usage.map((r) => r.request_id)).toEqual(['req-1', 'req-3']);
    expect(decoded.audit.map((r) => r.request_id)).toEqual(['req-2', 'req-4']);
  });

  it('drops the oldest records whatever their kind, and keeps kinds with their records', () => {
    const batch = new OutgoingBatch('b');
    batch.add(AUDIT, auditEvent(0));
    batch.add(USAGE, usageRecord(1));
    batch.add(AUDIT, auditEvent(2));
    expect(batch.dropOldest(2)).toBe(2);
    expect(requestIds(batch)).toEqual(['req-2']);
    expect(decodeRecordBatch(encodeBatch(batch)).audit.map((r) => r.request_id)).toEqual(['req-2']);
    expect(batch.dropOldest(5)).toBe(1);
    expect(batch.size).toBe(0);
  });

  it('appends another batch after its own records', () => {
    const batch = batchOf(2, 0);
    batch.append(batchOf(2, 2));
    expect(requestIds(batch)).toEqual(['req-0', 'req-1', 'req-2', 'req-3']);
  });
});
