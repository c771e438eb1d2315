import { encodeRecordBatch, type AuditEvent, type RecordBatchJobData, type UsageRecord } from '@gateway/shared';

// Small integers rather than strings: the kinds array of a full buffer holds hundreds of thousands
// of entries, and V8 stores an array of small integers unboxed.
export const USAGE = 0;
export const AUDIT = 1;
export type RecordKind = typeof USAGE | typeof AUDIT;

/**
 * One BullMQ job's worth of records on its way out (encodeBatch gives its wire form, the shared
 * RecordBatch). Its id becomes the jobId when the batch is cut and never changes, so a batch sent
 * twice (a lost reply, a retry, a re-send after a Redis restart) is one job in Redis, or at worst
 * a replay the writer's idempotent insert absorbs.
 */
export class OutgoingBatch {
  // One array in arrival order (not one per kind), so the bound drops the oldest records whatever
  // their kind.
  readonly records: (UsageRecord | AuditEvent)[] = [];
  readonly kinds: RecordKind[] = [];
  /** Handed to Redis at least once: its records may be in a job under this id, so no more join it. */
  attempted = false;
  /** Counted in enqueued_total already (a re-send is counted as resent instead). */
  counted = false;
  /** Redis run_id known when the add was acknowledged; another run_id means the job may be gone. */
  sentRunId: string | undefined;

  constructor(readonly id: string) {}

  get size(): number {
    return this.records.length;
  }

  add(kind: RecordKind, record: UsageRecord | AuditEvent): void {
    this.records.push(record);
    this.kinds.push(kind);
  }

  append(other: OutgoingBatch): void {
    for (let i = 0; i < other.records.length; i++) this.add(other.kinds[i] as RecordKind, other.records[i] as UsageRecord | AuditEvent);
  }

  /** Removes up to `count` of the oldest records; returns how many it removed. */
  dropOldest(count: number): number {
    const n = Math.min(count, this.records.length);
    this.records.splice(0, n);
    this.kinds.splice(0, n);
    return n;
  }
}

/** The job data of a batch. Throws for a record msgpack cannot encode. */
export function encodeBatch(batch: OutgoingBatch): RecordBatchJobData {
  const usage: UsageRecord[] = [];
  const audit: AuditEvent[] = [];
  for (let i = 0; i < batch.records.length; i++) {
    if (batch.kinds[i] === USAGE) usage.push(batch.records[i] as UsageRecord);
    else audit.push(batch.records[i] as AuditEvent);
  }
  return encodeRecordBatch(usage, audit);
}
