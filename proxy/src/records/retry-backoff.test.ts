import { afterEach, describe, expect, it, vi } from 'vitest';
import { retryDelayMs, RetryBackoff } from './retry-backoff.js';

describe('retryDelayMs', () => {
  it('doubles from 100 ms and stays at 5 s however many failures', () => {
    const middle = 0.5; // no spread
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((n) => retryDelayMs(n, middle))).toEqual([100, 200, 400, 800, 1_600, 3_200, 5_000, 5_000]);
    expect(retryDelayMs(1_000, middle)).toBe(5_000);
    expect(retryDelayMs(Number.MAX_SAFE_INTEGER, middle)).toBe(5_000);
  });

  it('spreads each wait within ±20%', () => {
    expect(retryDelayMs(1, 0)).toBe(80);
    expect(retryDelayMs(1, 0.999_999)).toBe(120);
    expect(retryDelayMs(20, 0)).toBe(4_000);
    expect(retryDelayMs(20, 0.999_999)).toBe(6_000);
  });
});

describe('RetryBackoff', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('waits after a failure and calls retry once when the wait is over', () => {
    vi.useFakeTimers();
    let retries = 0;
    const backoff = new RetryBackoff(() => retries++, () => 0.5);
    const now = Date.now();
    expect(backoff.waiting(now)).toBe(false);
    backoff.failed(now);
    backoff.failed(now);
    expect(backoff.failuresInARow).toBe(2);
    expect(backoff.waiting(now)).toBe(true);
    expect(backoff.waiting(now + 100)).toBe(true);
    expect(backoff.waiting(now + 200)).toBe(false);
    vi.advanceTimersByTime(199);
    expect(retries).toBe(0);
    vi.advanceTimersByTime(1);
    expect(retries).toBe(1);
    vi.advanceTimersByTime(10_000);
    expect(retries).toBe(1);
  });

  it('ends the run of failures on success but keeps a wait a later failure set', () => {
    const backoff = new RetryBackoff(() => {}, () => 0.5);
    const now = Date.now();
    backoff.failed(now);
    backoff.failed(now);
    backoff.failed(now);
    expect(backoff.succeeded()).toBe(3);
    expect(backoff.succeeded()).toBe(0);
    expect(backoff.failuresInARow).toBe(0);
    expect(backoff.waiting(now + 399)).toBe(true);
    // The next failure starts again from the shortest wait.
    backoff.failed(now);
    expect(backoff.waiting(now + 99)).toBe(true);
    expect(backoff.waiting(now + 100)).toBe(false);
    backoff.stop();
  });

  it('sends at once after skipWait', () => {
    const backoff = new RetryBackoff(() => {}, () => 0.5);
    backoff.failed();
    backoff.skipWait();
    expect(backoff.waiting()).toBe(false);
    expect(backoff.failuresInARow).toBe(1);
  });
});
