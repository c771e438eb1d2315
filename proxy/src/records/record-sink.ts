import type { AuditEvent, UsageRecord } from '@gateway/shared';

/**
 * Where the request path hands its records. push() must return at once and never throw: the
 * implementation (record-buffer.ts) batches them into BullMQ jobs off the request path.
 */
export interface RecordSink {
  pushUsage(record: UsageRecord): void;
  pushAudit(event: AuditEvent): void;
  /**
   * Resolves once every record pushed before the call is in Redis, or will never be (dropped:
   * the buffer was full while Redis was away, or closed). No timeout: whoever must not act before
   * its records are safe (a batch line's answer stored) waits as long as Redis is away.
   */
  queued(): Promise<void>;
  /** Sends everything buffered; resolves when it is in Redis or the timeout has passed. */
  flush(timeoutMs: number): Promise<void>;
  close(timeoutMs: number): Promise<void>;
}
