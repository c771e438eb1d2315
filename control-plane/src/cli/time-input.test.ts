import { describe, expect, it } from 'vitest';
import { UsageError } from './cli-errors.js';
import { parseInstant } from './time-input.js';

const NOW = Date.UTC(2026, 2, 2, 12, 0, 0);

describe('parseInstant', () => {
  it('reads durations back from now, or forward for an expiry', () => {
    expect(parseInstant('24h', 'from', NOW)).toBe(NOW - 24 * 3_600_000);
    expect(parseInstant('7d', 'from', NOW)).toBe(NOW - 7 * 86_400_000);
    expect(parseInstant('30m', 'from', NOW)).toBe(NOW - 30 * 60_000);
    expect(parseInstant('2w', 'from', NOW)).toBe(NOW - 14 * 86_400_000);
    expect(parseInstant('90d', 'expires', NOW, 'ahead')).toBe(NOW + 90 * 86_400_000);
  });

  it('reads ISO dates and times as UTC unless they name a zone', () => {
    expect(parseInstant('2026-03-01', 'from', NOW)).toBe(Date.UTC(2026, 2, 1));
    expect(parseInstant('2026-03-01T10:30', 'from', NOW)).toBe(Date.UTC(2026, 2, 1, 10, 30));
    expect(parseInstant('2026-03-01 10:30:15.250', 'from', NOW)).toBe(Date.UTC(2026, 2, 1, 10, 30, 15, 250));
    expect(parseInstant('2026-03-01T10:30:00Z', 'from', NOW)).toBe(Date.UTC(2026, 2, 1, 10, 30));
    expect(parseInstant('2026-03-01T10:30:00+02:00', 'from', NOW)).toBe(Date.UTC(2026, 2, 1, 8, 30));
    expect(parseInstant('2026-03-01T10:30:00-0130', 'from', NOW)).toBe(Date.UTC(2026, 2, 1, 12, 0));
  });

  it('takes Unix milliseconds as the records carry them', () => {
    expect(parseInstant('1772442904913', 'from', NOW)).toBe(1772442904913);
  });

  it('refuses anything else, naming the flag', () => {
    for (const bad of ['yesterday', '24', '7 d', '-1h', '2026-13-01', '2026-03-01T25:00', '']) {
      expect(() => parseInstant(bad, 'to', NOW), bad).toThrow(UsageError);
    }
    expect(() => parseInstant('soon', 'to', NOW)).toThrow(/^--to: "soon" is not a time/);
  });
});
