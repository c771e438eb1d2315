import { Fifo } from './fifo.js';
import type { OutgoingBatch } from './outgoing-batch.js';

/**
 * Batches Redis acknowledged but no writer is known to have written, oldest first, with the Redis
 * run_id each was acknowledged under.
 *
 * Redis may run without persistence (DESIGN §1), so an acknowledged job is not yet safe. A job
 * gone from Redis under the run_id it was added to was completed (records jobs are removed on
 * completion): that batch is written and let go. A batch acknowledged under another run_id may
 * have been lost with a restart or a failover, so it is sent again.
 */
export class SentBatches {
  private readonly batches = new Fifo<OutgoingBatch>();
  private held = 0;
  private runId: string | undefined;

  get records(): number {
    return this.held;
  }

  get length(): number {
    return this.batches.length;
  }

  /** Keeps a batch Redis just acknowledged, under the newest run_id known. */
  add(batch: OutgoingBatch): void {
    batch.sentRunId = this.runId;
    this.batches.push(batch);
    this.held += batch.size;
  }

  /** Lets the oldest go unconfirmed (the bound needs room); undefined when none is kept. */
  releaseOldest(): OutgoingBatch | undefined {
    const batch = this.batches.shift();
    if (batch !== undefined) this.held -= batch.size;
    return batch;
  }

  /** The oldest `limit` batches, to ask Redis about. */
  oldest(limit: number): OutgoingBatch[] {
    const batches: OutgoingBatch[] = [];
    for (let i = 0; i < limit && i < this.batches.length; i++) batches.push(this.batches.at(i) as OutgoingBatch);
    return batches;
  }

  /**
   * Applies what Redis answered about `checked` (from oldest()): its run_id now, and for each
   * checked batch whether its job is gone. Releases the written batches and returns, oldest
   * first, those to send again; they are no longer kept here.
   */
  settle(runId: string, checked: readonly OutgoingBatch[], jobGone: readonly boolean[]): OutgoingBatch[] {
    const restarted = runId !== this.runId;
    this.runId = runId;
    // The bound may have released some checked batches while Redis answered; match by identity.
    const written = new Set<OutgoingBatch>();
    checked.forEach((batch, i) => {
      if (jobGone[i] === true && batch.sentRunId === runId) written.add(batch);
    });
    // With the run_id unchanged, batches past the checked ones were all acknowledged under it and
    // none of them was asked about: nothing to do there.
    const scan = restarted ? this.batches.length : checked.length;
    const keep: OutgoingBatch[] = [];
    const resend: OutgoingBatch[] = [];
    for (let i = 0; i < scan; i++) {
      const batch = this.batches.shift();
      if (batch === undefined) break;
      if (written.has(batch)) this.held -= batch.size;
      else if (batch.sentRunId !== runId) resend.push(batch);
      else keep.push(batch);
    }
    for (let i = keep.length - 1; i >= 0; i--) this.batches.unshift(keep[i] as OutgoingBatch);
    for (const batch of resend) this.held -= batch.size;
    return resend;
  }
}
