import type { AuditEvent, UsageRecord } from '@gateway/shared';

/**
 * Where the request path hands its records. push() must return at once and never throw: the
 * implementation (record-buffer.ts) batches them into BullMQ jobs off the request path.
 */
export interface RecordSink {
  pushUsage(record: UsageRecord): void;
  pushAudit(event: AuditEvent): void;
  /** Sends everything buffered; resolves when it is in Redis or the timeout has passed. */
  flush(timeoutMs: number): Promise<void>;
  close(timeoutMs: number): Promise<void>;
}
