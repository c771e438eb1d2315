import { CompactRowsWriter, encodeCompactRecordBatch, type AuditEvent, type RecordBatchJobData, type UsageRecord } from '@gateway/shared';

/**
 * One BullMQ job's worth of records on its way out, held as compact rows (bytes and a dictionary
 * per segment, never the record objects) from the moment they are added until a writer has them;
 * encodeBatch gives its wire form, a version 3 RecordBatch. Its id becomes the jobId when the
 * batch is cut and never changes, so a batch sent twice (a lost reply, a retry, a re-send after a
 * Redis restart) is one job in Redis, or at worst a replay the writer's idempotent insert absorbs.
 */
export class OutgoingBatch {
  /** Oldest first; a batch merged into another keeps its own segment (and dictionary). */
  private readonly segments: CompactRowsWriter[] = [];
  private held = 0;
  /** Records a row could not carry: the batch cannot be encoded and is dropped whole when sent. */
  unencodable = 0;
  /** Handed to Redis at least once: its records may be in a job under this id, so no more join it. */
  attempted = false;
  /** Counted in enqueued_total already (a re-send is counted as resent instead). */
  counted = false;
  /** Could not be encoded, so never sent (its records are counted as dropped). */
  dropped = false;
  /** The batch this one's records were appended to when it was cut: they are sent with that one. */
  mergedInto: OutgoingBatch | null = null;
  /** The batches appended to this one (and to those): they settle when this one does. */
  merged: OutgoingBatch[] | null = null;
  /** Redis run_id known when the add was acknowledged; another run_id means the job may be gone. */
  sentRunId: string | undefined;

  constructor(readonly id: string) {}

  /** Records (a request's audit event and usage record are two). */
  get size(): number {
    return this.held + this.unencodable;
  }

  /** One request's records as one row. */
  add(audit: AuditEvent | null, usage: UsageRecord | null): void {
    let segment = this.segments.at(-1);
    if (segment === undefined) this.segments.push((segment = new CompactRowsWriter()));
    const n = (audit === null ? 0 : 1) + (usage === null ? 0 : 1);
    try {
      segment.add(audit, usage);
      this.held += n;
    } catch {
      this.unencodable += n;
    }
  }

  /** Cut: no more rows join this batch's segments (another batch may still be appended). */
  seal(): void {
    for (const s of this.segments) s.seal();
  }

  append(other: OutgoingBatch): void {
    other.mergedInto = this;
    const merged = (this.merged ??= []);
    merged.push(other);
    if (other.merged !== null) for (const inner of other.merged) merged.push(inner);
    for (const segment of other.segments) this.segments.push(segment);
    this.held += other.held;
    this.unencodable += other.unencodable;
  }

  /** Removes the oldest rows, about `count` records (a row's two go together); returns how many it removed. */
  dropOldest(count: number): number {
    let dropped = 0;
    while (dropped < count && this.segments.length > 0) {
      const segment = this.segments[0] as CompactRowsWriter;
      dropped += segment.dropOldest(count - dropped);
      if (segment.records === 0) this.segments.shift();
    }
    this.held -= dropped;
    if (this.held === 0 && this.unencodable > 0 && dropped < count) {
      const n = Math.min(this.unencodable, count - dropped);
      this.unencodable -= n;
      dropped += n;
    }
    return dropped;
  }

  /** Bytes held for this batch's rows. */
  get bytes(): number {
    let n = 0;
    for (const s of this.segments) n += s.rows().length;
    return n;
  }

  /** @internal encodeBatch's view. */
  get parts(): readonly CompactRowsWriter[] {
    return this.segments;
  }
}

/** The job data of a batch. Throws for a batch holding a record the format cannot carry. */
export function encodeBatch(batch: OutgoingBatch): RecordBatchJobData {
  if (batch.unencodable > 0) throw new Error(`${batch.unencodable} record(s) in the batch hold a value the record format cannot carry`);
  return encodeCompactRecordBatch(batch.parts.filter((s) => s.records > 0));
}
