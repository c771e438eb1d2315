import { describe, expect, it } from 'vitest';
import { BatchAssembler } from './batch-assembler.js';
import { BoundedBacklog, type BacklogSources } from './bounded-backlog.js';
import { batchOf, requestIds, usageRecord } from './record-fixtures.case.js';
import { SentBatches } from './sent-batches.js';

/** Sources with sent batches of `sent` sizes and `unsent` records that drop at most `perCall` at a time. */
function sources(sent: number[], unsent: number, perCall = Infinity) {
  const state = { sent: [...sent], unsent, calls: [] as string[] };
  const s: BacklogSources = {
    releaseOldestSent() {
      const size = state.sent.shift();
      if (size !== undefined) state.calls.push(`release ${size}`);
      return size;
    },
    dropOldestUnsent(max) {
      const n = Math.min(max, state.unsent, perCall);
      state.unsent -= n;
      state.calls.push(`drop ${n}`);
      return n;
    },
  };
  return { s, state };
}

describe('BoundedBacklog', () => {
  it('does nothing within the bound', () => {
    const { s, state } = sources([5], 5);
    expect(new BoundedBacklog(10).trim(10, s)).toEqual({ released: 0, dropped: 0, dropsToLog: 0 });
    expect(state.calls).toEqual([]);
  });

  it('lets unconfirmed batches go, whole, before dropping any unsent record', () => {
    const { s, state } = sources([4, 4], 10);
    expect(new BoundedBacklog(10).trim(18, s)).toEqual({ released: 8, dropped: 0, dropsToLog: 0 });
    expect(state.calls).toEqual(['release 4', 'release 4']);
    const more = sources([4], 10);
    expect(new BoundedBacklog(10).trim(14, more.s)).toEqual({ released: 4, dropped: 0, dropsToLog: 0 });
    // One batch larger than the excess goes whole.
    const big = sources([6, 6], 10);
    expect(new BoundedBacklog(10).trim(11, big.s).released).toBe(6);
  });

  it('then drops unsent records, oldest first, across batches until within the bound', () => {
    const { s, state } = sources([2], 20, 3);
    const trimmed = new BoundedBacklog(10).trim(22, s);
    expect(trimmed).toMatchObject({ released: 2, dropped: 10 });
    expect(state.calls).toEqual(['release 2', 'drop 3', 'drop 3', 'drop 3', 'drop 1']);
  });

  it('stops when only records being sent are left over the bound', () => {
    const { s } = sources([], 2);
    expect(new BoundedBacklog(10).trim(15, s)).toMatchObject({ released: 0, dropped: 2 });
  });

  it('logs the first drop at once, then what accumulated at most every 10 s', () => {
    let now = 1_000_000;
    const backlog = new BoundedBacklog(1, () => now);
    const trim = (excess: number) => backlog.trim(1 + excess, sources([], excess).s).dropsToLog;
    expect(trim(2)).toBe(2);
    now += 5_000;
    expect(trim(3)).toBe(0);
    now += 4_999;
    expect(trim(4)).toBe(0);
    now += 1;
    expect(trim(1)).toBe(8);
    expect(trim(1)).toBe(0);
  });

  it('keeps the counts of the real pieces in step: newest unsent records survive', () => {
    const sent = new SentBatches();
    sent.add(batchOf(3, 100));
    const assembler = new BatchAssembler(4, 60_000, () => {});
    for (let i = 0; i < 10; i++) {
      assembler.add(null, usageRecord(i));
      assembler.cutWhenDue();
    }
    const trimmed = new BoundedBacklog(6).trim(sent.records + assembler.records, {
      releaseOldestSent: () => sent.releaseOldest()?.size,
      dropOldestUnsent: (max) => assembler.dropOldest(max),
    });
    expect(trimmed).toMatchObject({ released: 3, dropped: 4 });
    expect(sent.records + assembler.records).toBe(6);
    const left = [];
    for (let b = assembler.next(); b !== undefined; b = assembler.next()) left.push(...requestIds(b));
    assembler.cut();
    for (let b = assembler.next(); b !== undefined; b = assembler.next()) left.push(...requestIds(b));
    expect(left).toEqual(['req-4', 'req-5', 'req-6', 'req-7', 'req-8', 'req-9']);
  });
});
