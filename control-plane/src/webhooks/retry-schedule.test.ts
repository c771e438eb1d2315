import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_DELAYS_MS, retryDelay } from './retry-schedule.js';

describe('webhook retry schedule', () => {
  it('makes 10 attempts over about a day, growing, each delay within ±10 %', () => {
    expect(DEFAULT_RETRY_DELAYS_MS).toHaveLength(9);
    const total = DEFAULT_RETRY_DELAYS_MS.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(20 * 3_600_000);
    expect(total * 1.1).toBeLessThan(24 * 3_600_000);
    for (let i = 1; i < DEFAULT_RETRY_DELAYS_MS.length; i++) expect(DEFAULT_RETRY_DELAYS_MS[i]).toBeGreaterThan(DEFAULT_RETRY_DELAYS_MS[i - 1]!);
    expect(retryDelay(DEFAULT_RETRY_DELAYS_MS, 1, () => 0)).toBe(4_500);
    expect(retryDelay(DEFAULT_RETRY_DELAYS_MS, 1, () => 1)).toBe(5_500);
    expect(retryDelay(DEFAULT_RETRY_DELAYS_MS, 9, () => 0.5)).toBe(8 * 3_600_000);
    // After the 10th attempt there is no other.
    expect(retryDelay(DEFAULT_RETRY_DELAYS_MS, 10)).toBeNull();
  });
});
