import { describe, expect, it } from 'vitest';
import { boundedAll } from './bounded-all.js';

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
