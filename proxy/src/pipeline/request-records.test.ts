import { describe, expect, it } from 'vitest';
import { costUsd, type UsageOutcome } from './request-records.js';

const usage = (over: Partial<UsageOutcome>): UsageOutcome => ({
  input: 0,
  output: 0,
  cached: 0,
  cacheWrite: 0,
  finishReason: 'stop',
  rawFinishReason: null,
  stream: false,
  price: { input: 3, output: 15, cached_input: 0.3, cache_write: 3.75 },
  ...over,
});

describe('costUsd', () => {
  it('prices the prompt read from the cache, written to it and the rest apart', () => {
    // 1,000 prompt tokens: 600 read from the cache, 300 written to it, 100 plain; 50 output.
    expect(costUsd(usage({ input: 1_000, cached: 600, cacheWrite: 300, output: 50 }))).toBeCloseTo((100 * 3 + 600 * 0.3 + 300 * 3.75 + 50 * 15) / 1e6, 12);
  });

  it('prices writes as input when the price list has no cache_write of its own', () => {
    const price = { input: 3, output: 15, cached_input: 0.3, cache_write: 3 };
    expect(costUsd(usage({ input: 1_000, cacheWrite: 400, price }))).toBe(costUsd(usage({ input: 1_000, price })));
  });

  it('never prices more cached and written tokens than the prompt holds', () => {
    expect(costUsd(usage({ input: 100, cached: 80, cacheWrite: 80 }))).toBeCloseTo((80 * 0.3 + 20 * 3.75) / 1e6, 12);
  });

  it('is null without a price', () => {
    expect(costUsd(usage({ input: 10, price: null }))).toBeNull();
  });
});
