// Test-only (a .case.ts file stays out of the build).
import { randomUUID } from 'node:crypto';
import { decodeRecordBatch, newRecordId, type AuditEvent, type UsageRecord } from '@gateway/shared';
import { encodeBatch, OutgoingBatch } from './outgoing-batch.js';

/** Records for the unit tests of this folder; request_id carries `n` so order can be checked. */
export function usageRecord(n: number): UsageRecord {
  return {
    id: newRecordId(),
    request_id: `req-${n}`,
    project_id: randomUUID(),
    key_id: randomUUID(),
    timestamp: Date.now(),
    model: 'm',
    provider: 'p',
    tokens: { input: 1, output: 2, total: 3 },
    latency_ms: n,
    finish_reason: 'stop',
    stream: false,
  };
}

export function auditEvent(n: number): AuditEvent {
  return {
    id: newRecordId(),
    request_id: `req-${n}`,
    timestamp: Date.now(),
    type: 'gateway.request',
    outcome: 'success',
    status: 200,
    error_code: null,
    project_id: null,
    key_id: null,
    actor: null,
    model: null,
    provider: null,
    client_ip: null,
    user_agent: null,
    latency_ms: n,
  };
}

/** A batch of usage records numbered from..from+size-1. */
export function batchOf(size: number, from = 0): OutgoingBatch {
  const batch = new OutgoingBatch(newRecordId());
  for (let i = 0; i < size; i++) batch.add(null, usageRecord(from + i));
  return batch;
}

/** The request ids a batch carries, as its wire form reads back, in the order they were numbered. */
export function requestIds(batch: OutgoingBatch): string[] {
  const decoded = decodeRecordBatch(encodeBatch(batch));
  const n = (id: string) => Number(id.slice('req-'.length));
  return [...decoded.audit, ...decoded.usage].map((r) => r.request_id).sort((a, b) => n(a) - n(b));
}
