import { describe, expect, it } from 'vitest';
import { TargetHealth } from './target-health.js';

const config = { failures: 3, base_ms: 1_000, max_ms: 4_000 };

describe('TargetHealth', () => {
  it('opens after consecutive failures, lets one trial through after the cooldown, and closes on success', () => {
    const h = new TargetHealth(config);
    h.failed(0);
    h.failed(0);
    expect(h.available(0)).toBe(true);
    h.succeeded();
    h.failed(0);
    h.failed(0);
    h.failed(0);
    expect(h.state).toBe('open');
    expect(h.available(999)).toBe(false);
    expect(h.available(1_000)).toBe(true);
    expect(h.state).toBe('half-open');
    // One trial at a time.
    expect(h.available(1_000)).toBe(false);
    h.succeeded();
    expect(h.state).toBe('closed');
    expect(h.available(1_001)).toBe(true);
    expect(h.cooldowns).toBe(1);
  });

  it('doubles the cooldown after each failed trial, up to the maximum, and honours Retry-After', () => {
    const h = new TargetHealth(config);
    for (let i = 0; i < 3; i++) h.failed(0);
    expect(h.available(1_000)).toBe(true);
    h.failed(1_000); // trial failed: 2 s
    expect(h.available(2_999)).toBe(false);
    expect(h.available(3_000)).toBe(true);
    h.failed(3_000); // 4 s
    expect(h.available(6_999)).toBe(false);
    expect(h.available(7_000)).toBe(true);
    h.failed(7_000); // still 4 s: the maximum
    expect(h.available(11_000)).toBe(true);
    h.failed(11_000, 30_000); // the provider asked for 30 s
    expect(h.available(40_999)).toBe(false);
    expect(h.available(41_000)).toBe(true);
  });

  it('gives a trial slot back when the attempt ended without a verdict', () => {
    const h = new TargetHealth(config);
    for (let i = 0; i < 3; i++) h.failed(0);
    expect(h.available(1_000)).toBe(true);
    h.released();
    expect(h.available(1_000)).toBe(true);
  });
});
