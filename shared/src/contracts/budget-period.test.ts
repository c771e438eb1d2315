import { describe, expect, it } from 'vitest';
import { budgetWindow, isTimezone } from './budget-period.js';

const rule = (period: string, timezone = 'UTC', created_at = Date.UTC(2026, 0, 1, 10, 17)) => ({ period, timezone, created_at });
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

describe('budget periods', () => {
  it('total never resets', () => {
    expect(budgetWindow(rule('total'), Date.now())).toEqual({ id: 'total', start: 0, end: null });
  });

  it('a calendar day starts at midnight in the zone, and lasts 23 hours on the spring DST change', () => {
    const paris = budgetWindow(rule('day', 'Europe/Paris'), Date.UTC(2026, 2, 29, 12));
    expect(iso(paris.start)).toBe('2026-03-28T23:00:00.000Z');
    expect(iso(paris.end)).toBe('2026-03-29T22:00:00.000Z');
    // Just before midnight in Paris (22:59 UTC in summer) is still the same day.
    expect(budgetWindow(rule('day', 'Europe/Paris'), Date.UTC(2026, 5, 10, 21, 59)).start).toBe(Date.UTC(2026, 5, 9, 22));
    expect(budgetWindow(rule('day', 'Europe/Paris'), Date.UTC(2026, 5, 10, 22, 0)).start).toBe(Date.UTC(2026, 5, 10, 22));
  });

  it('a week starts on Monday and a month on the 1st, in the zone', () => {
    // Thursday 26 November 2026, 03:00 UTC: still Wednesday in New York.
    const week = budgetWindow(rule('week', 'America/New_York'), Date.UTC(2026, 10, 26, 3));
    expect(iso(week.start)).toBe('2026-11-23T05:00:00.000Z');
    expect(iso(week.end)).toBe('2026-11-30T05:00:00.000Z');
    const month = budgetWindow(rule('month', 'Asia/Tokyo'), Date.UTC(2026, 10, 30, 16));
    // 1 December 01:00 in Tokyo: December's period.
    expect(iso(month.start)).toBe('2026-11-30T15:00:00.000Z');
    expect(iso(month.end)).toBe('2026-12-31T15:00:00.000Z');
    expect(budgetWindow(rule('month'), Date.UTC(2026, 10, 30, 16)).id).not.toBe(month.id);
  });

  it('fixed windows count from the creation', () => {
    const created = Date.UTC(2026, 0, 1, 10, 17);
    const w = budgetWindow(rule('6h', 'UTC', created), created + 13 * 3600_000);
    expect(w.start).toBe(created + 12 * 3600_000);
    expect(w.end).toBe(created + 18 * 3600_000);
    expect(budgetWindow(rule('30m', 'UTC', created), created + 29 * 60_000).id).toBe(`w${created}`);
    expect(budgetWindow(rule('2d', 'UTC', created), created + 2 * 86_400_000).start).toBe(created + 2 * 86_400_000);
  });

  it('knows IANA zones', () => {
    expect(isTimezone('Europe/Paris')).toBe(true);
    expect(isTimezone('UTC')).toBe(true);
    expect(isTimezone('Mars/Olympus')).toBe(false);
  });
});
