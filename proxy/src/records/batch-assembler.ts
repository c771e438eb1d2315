import { newRecordId, type AuditEvent, type UsageRecord } from '@gateway/shared';
import { Fifo } from './fifo.js';
import { OutgoingBatch } from './outgoing-batch.js';

/**
 * Gathers records into batches of up to `batchSize`, cut when full or `flushMs` after the first
 * record, and holds the cut batches in order until they are taken for sending. Knows nothing of
 * Redis: `onCut` tells the owner there is something to send.
 */
export class BatchAssembler {
  private open: OutgoingBatch | null = null;
  private readonly waiting = new Fifo<OutgoingBatch>();
  private held = 0;
  private flushTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly batchSize: number,
    private readonly flushMs: number,
    private readonly onCut: () => void,
  ) {}

  /** Records in the open batch and the waiting ones. */
  get records(): number {
    return this.held;
  }

  /**
   * Adds to the open batch without cutting it; cutWhenDue() follows. The two are apart so the
   * owner can apply its bound in between, before a full batch is handed on and out of its reach.
   */
  add(audit: AuditEvent | null, usage: UsageRecord | null): void {
    if (this.open === null) this.open = new OutgoingBatch(newRecordId());
    this.open.add(audit, usage);
    this.held += (audit === null ? 0 : 1) + (usage === null ? 0 : 1);
  }

  /** Cuts the open batch if full, otherwise makes sure a timer will. */
  cutWhenDue(): void {
    if (this.open !== null && this.open.size >= this.batchSize) this.cut();
    else if (this.flushTimer === null) this.flushTimer = setTimeout(() => this.cut(), this.flushMs);
  }

  cut(): void {
    if (this.flushTimer !== null) {
      clearTimeout(this.flushTimer);
      this.flushTimer = null;
    }
    const open = this.open;
    if (open === null || open.size === 0) return;
    this.open = null;
    open.seal();
    const last = this.waiting.last();
    // While Redis is away, small batches cut every flushMs join the newest waiting one, so the
    // buffer holds few full batches and sends few jobs once Redis is back.
    if (last !== undefined && !last.attempted && last.size + open.size <= this.batchSize) last.append(open);
    else this.waiting.push(open);
    this.onCut();
  }

  /** The batch records are being added to (cut when full or when its flush timer fires); null when none. */
  openBatch(): OutgoingBatch | null {
    return this.open;
  }

  /** The batch dropOldest takes from next (the oldest waiting one, else the open one); null when none. */
  oldest(): OutgoingBatch | null {
    return this.waiting.first() ?? this.open;
  }

  /** The batches cut and not yet taken, oldest first. */
  waitingBatches(): OutgoingBatch[] {
    return [...this.waiting];
  }

  /** Takes the oldest waiting batch for sending; its records are no longer counted here. */
  next(): OutgoingBatch | undefined {
    for (let batch = this.waiting.shift(); batch !== undefined; batch = this.waiting.shift()) {
      if (batch.size === 0) continue;
      this.held -= batch.size;
      return batch;
    }
    return undefined;
  }

  /** Puts batches back at the front, oldest first (a failed send, a re-send after a restart). */
  putBack(batches: readonly OutgoingBatch[]): void {
    for (let i = batches.length - 1; i >= 0; i--) {
      const batch = batches[i] as OutgoingBatch;
      this.waiting.unshift(batch);
      this.held += batch.size;
    }
  }

  /**
   * Drops up to `max` of the oldest records held here, all from one batch (the oldest waiting
   * one, else the open one); returns how many. 0 means nothing more can go.
   */
  dropOldest(max: number): number {
    const oldest = this.waiting.first() ?? this.open;
    if (oldest === null) return 0;
    const n = oldest.dropOldest(max);
    if (oldest.size === 0) {
      if (oldest === this.open) this.open = null;
      else this.waiting.shift();
    }
    this.held -= n;
    return n;
  }

  stop(): void {
    if (this.flushTimer !== null) clearTimeout(this.flushTimer);
    this.flushTimer = null;
  }
}
