import { describe, expect, it } from 'vitest';
import { boundedAll, boundedCalls } from './bounded-all.js';
import { Cancel } from './cancel.js';

describe('boundedAll', () => {
  it('runs every call, never more than the limit at once, results in call order', async () => {
    let running = 0;
    let most = 0;
    const results = await boundedAll(10, 3, async (i) => {
      running++;
      most = Math.max(most, running);
      // Later calls finish first: order comes from the index, not from completion.
      await new Promise((resolve) => setImmediate(resolve));
      if (i % 2 === 0) await new Promise((resolve) => setImmediate(resolve));
      running--;
      return i * 10;
    });
    expect(results).toEqual([0, 10, 20, 30, 40, 50, 60, 70, 80, 90]);
    expect(most).toBe(3);
  });

  it('rejects with the first failure and starts no call after it', async () => {
    const started: number[] = [];
    const outcome = boundedAll(10, 2, async (i) => {
      started.push(i);
      await new Promise((resolve) => setImmediate(resolve));
      if (i === 1) throw new Error('call 1 failed');
      return i;
    });
    await expect(outcome).rejects.toThrow('call 1 failed');
    expect(started).toEqual([0, 1, 2]);
  });

  it('answers no calls with an empty list', async () => {
    expect(await boundedAll(0, 4, async () => 1)).toEqual([]);
  });
});

describe('boundedCalls', () => {
  /** A call that ends only when told: answered by `finish`, or rejected when its Cancel aborts. */
  function pending() {
    const calls: { index: number; cancel: Cancel; finish: (value: number) => void; fail: (err: Error) => void }[] = [];
    const call = (index: number, cancel: Cancel) =>
      new Promise<number>((resolve, reject) => {
        calls.push({ index, cancel, finish: resolve, fail: reject });
        cancel.onAbort(() => reject(new Error(`call ${index} aborted`)));
      });
    return { calls, call };
  }
  const tick = () => new Promise((resolve) => setImmediate(resolve));

  it('stops every call in flight when the client request is cancelled, and starts no more', async () => {
    const parent = new Cancel();
    const { calls, call } = pending();
    const outcome = boundedCalls(parent, 10, 3, call);
    await tick();
    expect(calls.map((c) => c.index)).toEqual([0, 1, 2]);
    parent.abort();
    await expect(outcome).rejects.toThrow(/aborted/);
    expect(calls.map((c) => c.cancel.aborted)).toEqual([true, true, true]);
    expect(calls).toHaveLength(3);
  });

  it('stops the siblings in flight when one call fails', async () => {
    const { calls, call } = pending();
    const outcome = boundedCalls(new Cancel(), 10, 3, call);
    await tick();
    calls[1]?.fail(new Error('throttled'));
    await expect(outcome).rejects.toThrow('throttled');
    expect(calls.map((c) => c.cancel.aborted)).toEqual([true, false, true]);
  });

  it('answers in call order when every call succeeds, each with a Cancel of its own', async () => {
    const seen = new Set<Cancel>();
    const parent = new Cancel();
    const results = await boundedCalls(parent, 4, 2, async (index, cancel) => {
      seen.add(cancel);
      await new Promise((resolve) => setImmediate(resolve));
      return index * 2;
    });
    expect(results).toEqual([0, 2, 4, 6]);
    expect(seen.size).toBe(4);
    expect(seen.has(parent)).toBe(false);
  });
});
