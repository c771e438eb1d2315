import { afterEach, describe, expect, it, vi } from 'vitest';
import { BatchAssembler } from './batch-assembler.js';
import type { OutgoingBatch } from './outgoing-batch.js';
import { batchOf, requestIds, usageRecord } from './record-fixtures.case.js';

function assembler(batchSize: number, flushMs = 60_000) {
  const cuts = { count: 0 };
  const a = new BatchAssembler(batchSize, flushMs, () => cuts.count++);
  return { a, cuts };
}

function push(a: BatchAssembler, from: number, count: number): void {
  for (let i = from; i < from + count; i++) {
    a.add(null, usageRecord(i));
    a.cutWhenDue();
  }
}

function drain(a: BatchAssembler): OutgoingBatch[] {
  const batches: OutgoingBatch[] = [];
  for (let b = a.next(); b !== undefined; b = a.next()) batches.push(b);
  return batches;
}

describe('BatchAssembler', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('cuts a batch as soon as it holds batchSize records', () => {
    const { a, cuts } = assembler(3);
    push(a, 0, 7);
    expect(cuts.count).toBe(2);
    expect(a.records).toBe(7);
    const batches = drain(a);
    expect(batches.map(requestIds)).toEqual([
      ['req-0', 'req-1', 'req-2'],
      ['req-3', 'req-4', 'req-5'],
    ]);
    expect(new Set(batches.map((b) => b.id)).size).toBe(2);
    // The seventh is still in the open batch, counted, not yet to be sent.
    expect(a.records).toBe(1);
    a.stop();
  });

  it('cuts a part-filled batch flushMs after its first record', () => {
    vi.useFakeTimers();
    const { a, cuts } = assembler(100, 10);
    push(a, 0, 2);
    vi.advanceTimersByTime(9);
    push(a, 2, 1);
    expect(cuts.count).toBe(0);
    vi.advanceTimersByTime(1);
    expect(cuts.count).toBe(1);
    expect(drain(a).map(requestIds)).toEqual([['req-0', 'req-1', 'req-2']]);
  });

  it('adds without cutting, so a full batch stays within reach until cutWhenDue', () => {
    const { a, cuts } = assembler(2);
    a.add(null, usageRecord(0));
    a.add(null, usageRecord(1));
    expect(cuts.count).toBe(0);
    expect(a.next()).toBeUndefined();
    a.cutWhenDue();
    expect(cuts.count).toBe(1);
    a.stop();
  });

  it('merges a small cut into the newest waiting batch while it fits and was never sent', () => {
    const { a } = assembler(4);
    push(a, 0, 2);
    a.cut();
    push(a, 2, 2);
    a.cut();
    push(a, 4, 1);
    a.cut();
    expect(drain(a).map(requestIds)).toEqual([['req-0', 'req-1', 'req-2', 'req-3'], ['req-4']]);
  });

  it('never merges into a batch already handed to Redis', () => {
    const { a } = assembler(4);
    push(a, 0, 1);
    a.cut();
    const sent = a.next() as OutgoingBatch;
    sent.attempted = true;
    a.putBack([sent]);
    push(a, 1, 1);
    a.cut();
    expect(drain(a).map(requestIds)).toEqual([['req-0'], ['req-1']]);
  });

  it('puts batches back ahead of the waiting ones, oldest first, counting their records again', () => {
    const { a } = assembler(2);
    push(a, 10, 2);
    a.putBack([batchOf(1, 0), batchOf(2, 1)]);
    expect(a.records).toBe(5);
    expect(drain(a).map(requestIds)).toEqual([['req-0'], ['req-1', 'req-2'], ['req-10', 'req-11']]);
    expect(a.records).toBe(0);
  });

  it('drops the oldest records from one batch at a time: waiting batches first, then the open one', () => {
    const { a } = assembler(3);
    push(a, 0, 5);
    expect(a.dropOldest(4)).toBe(3);
    expect(a.records).toBe(2);
    expect(a.dropOldest(1)).toBe(1);
    expect(a.dropOldest(10)).toBe(1);
    expect(a.records).toBe(0);
    expect(a.dropOldest(1)).toBe(0);
    // The emptied open batch is gone, not cut as an empty job.
    a.cut();
    expect(a.next()).toBeUndefined();
    a.stop();
  });
});
