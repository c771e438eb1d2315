import { describe, expect, it } from 'vitest';
import type { OutgoingBatch } from './outgoing-batch.js';
import { batchOf } from './record-fixtures.case.js';
import { SentBatches } from './sent-batches.js';

/** SentBatches that has learnt run_id `runId`, holding `sizes` batches added under it. */
function sentUnder(runId: string, sizes: number[]): { sent: SentBatches; batches: OutgoingBatch[] } {
  const sent = new SentBatches();
  sent.settle(runId, [], []);
  const batches = sizes.map((size) => batchOf(size));
  for (const b of batches) sent.add(b);
  return { sent, batches };
}

describe('SentBatches', () => {
  it('stamps each batch with the newest run_id known when Redis acknowledged it', () => {
    const sent = new SentBatches();
    const early = batchOf(1);
    sent.add(early);
    expect(early.sentRunId).toBeUndefined();
    expect(sent.settle('run-a', [], [])).toEqual([early]);
    const later = batchOf(2);
    sent.add(later);
    expect(later.sentRunId).toBe('run-a');
    expect(sent.records).toBe(2);
  });

  it('lets go of batches whose job is gone under the same run_id, and keeps the rest', () => {
    const { sent, batches } = sentUnder('run-a', [1, 2, 3]);
    const resend = sent.settle('run-a', batches, [true, false, true]);
    expect(resend).toEqual([]);
    expect(sent.length).toBe(1);
    expect(sent.records).toBe(2);
    expect(sent.oldest(10)).toEqual([batches[1]]);
  });

  it('sends again every batch added under another run_id, oldest first, even unchecked ones', () => {
    const { sent, batches } = sentUnder('run-a', [1, 2, 3]);
    // The job looks gone, but Redis restarted: it was lost, not written.
    const resend = sent.settle('run-b', batches.slice(0, 2), [true, false]);
    expect(resend).toEqual(batches);
    expect(sent.length).toBe(0);
    expect(sent.records).toBe(0);
  });

  it('re-sends batches acknowledged before any run_id was known', () => {
    const sent = new SentBatches();
    const early = batchOf(4);
    sent.add(early);
    expect(sent.settle('run-a', [early], [false])).toEqual([early]);
    expect(sent.records).toBe(0);
  });

  it('keeps the batches past the checked ones untouched while the run_id is unchanged', () => {
    const { sent, batches } = sentUnder('run-a', [1, 1, 1, 1]);
    const checked = sent.oldest(2);
    expect(checked).toEqual(batches.slice(0, 2));
    expect(sent.settle('run-a', checked, [true, true])).toEqual([]);
    expect(sent.oldest(10)).toEqual(batches.slice(2));
    expect(sent.records).toBe(2);
  });

  it('matches answers to batches by identity when the bound released some while Redis answered', () => {
    const { sent, batches } = sentUnder('run-a', [1, 2, 4]);
    const checked = sent.oldest(2);
    expect(sent.releaseOldest()).toBe(batches[0]);
    expect(sent.records).toBe(6);
    // The answer for batches[0] must not release batches[1], nor touch the unchecked batches[2].
    expect(sent.settle('run-a', checked, [true, false])).toEqual([]);
    expect(sent.oldest(10)).toEqual([batches[1], batches[2]]);
    expect(sent.records).toBe(6);
  });

  it('releases the oldest first and says when none is left', () => {
    const { sent, batches } = sentUnder('run-a', [2, 3]);
    expect(sent.releaseOldest()).toBe(batches[0]);
    expect(sent.releaseOldest()).toBe(batches[1]);
    expect(sent.releaseOldest()).toBeUndefined();
    expect(sent.records).toBe(0);
  });
});
