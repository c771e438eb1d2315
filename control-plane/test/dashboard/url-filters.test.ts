import { describe, expect, it } from 'vitest';
import { auditViewFromQuery, auditViewToParams } from '../../dashboard/src/lib/audit-view.js';
import { formatShare, formatTickTime } from '../../dashboard/src/lib/format.js';
import { fromLocalInputValue, presetChoice, resolveRange, thisMonth } from '../../dashboard/src/lib/record-query.js';
import { utcOffset } from '../../dashboard/src/lib/time-zone.js';
import { fromUrlTime, rangeFromQuery, rangeToParams, toUrlTime, withParams } from '../../dashboard/src/lib/url-filters.js';
import { buildUsageSeries, describeBucket, pickBucketMs } from '../../dashboard/src/lib/usage-series.js';
import { activeFilterCount, usageViewFromQuery, usageViewToParams, withoutFilters } from '../../dashboard/src/lib/usage-view.js';

/**
 * The usage and audit pages keep their filters in the address: what goes in must come back out,
 * whatever else the address holds, and a hand-edited or stale address falls back to defaults
 * rather than to a broken page. Times here are built in the test process's own zone, as the
 * browser's would be.
 */
const NOW = new Date(2026, 10, 23, 14, 5, 30).getTime();
const KEY = '3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f';

describe('filters in the address', () => {
  it('writes custom bounds as UTC minutes and reads them back', () => {
    expect(toUrlTime(Date.UTC(2026, 10, 23, 13, 5, 59))).toBe('2026-11-23T13:05Z');
    expect(fromUrlTime('2026-11-23T13:05Z')).toBe(Date.UTC(2026, 10, 23, 13, 5));
    expect(fromUrlTime('2026-11-23T13:05:07.250Z')).toBe(Date.UTC(2026, 10, 23, 13, 5, 7, 250));
    for (const bad of [null, '', '2026-11-23', '2026-11-23T13:05', '1700000000000', '2026-13-45T99:99Z']) expect(fromUrlTime(bad), String(bad)).toBeUndefined();
  });

  it('round-trips a usage view, keeping the parameters it does not own', () => {
    const from = new Date(2026, 10, 20, 8, 0).getTime();
    const to = new Date(2026, 10, 21, 8, 30).getTime();
    const query = new URLSearchParams({ project: 'p-1', range: 'custom', from: toUrlTime(from), to: toUrlTime(to), model: 'gpt-4o', finish_reason: 'stop', key: KEY, by: 'key' });
    const view = usageViewFromQuery(query, NOW);
    expect(view).toMatchObject({ model: 'gpt-4o', provider: '', finish_reason: 'stop', key_id: KEY, breakdown: 'key', range: { preset: 'custom' } });
    expect(resolveRange(view.range, NOW)).toEqual({ from, to });
    expect(activeFilterCount(view)).toBe(3);

    const href = withParams('/usage', query, usageViewToParams(view));
    const again = new URL(href, 'http://x').searchParams;
    expect(again.get('project')).toBe('p-1');
    expect(usageViewFromQuery(again, NOW)).toEqual(view);

    const cleared = new URL(withParams('/usage', query, usageViewToParams(withoutFilters(view))), 'http://x').searchParams;
    expect([...cleared.keys()].sort()).toEqual(['by', 'from', 'project', 'range', 'to']);
  });

  it('leaves defaults out of the address and falls back to them for anything unreadable', () => {
    const view = usageViewFromQuery(new URLSearchParams(), NOW);
    expect(view).toMatchObject({ model: '', provider: '', finish_reason: '', key_id: '', breakdown: 'model', range: { preset: '24h' } });
    expect(withParams('/usage', new URLSearchParams(), usageViewToParams(view))).toBe('/usage');

    const odd = usageViewFromQuery(new URLSearchParams({ range: 'fortnight', finish_reason: 'bored', key: 'not-a-uuid', by: 'colour', model: `  ${'m'.repeat(300)}  ` }), NOW);
    expect(odd).toMatchObject({ finish_reason: '', key_id: '', breakdown: 'model', range: { preset: '24h' } });
    expect(odd.model).toHaveLength(200);
    // A custom range that is missing a bound, or runs backwards, is the default instead.
    expect(rangeFromQuery(new URLSearchParams({ range: 'custom', from: '2026-11-23T13:05Z' }), NOW, '7d').preset).toBe('7d');
    expect(rangeFromQuery(new URLSearchParams({ range: 'custom', from: '2026-11-23T13:05Z', to: '2026-11-22T13:05Z' }), NOW, '7d').preset).toBe('7d');
    expect(rangeToParams(presetChoice('month', NOW), '24h')).toEqual({ range: 'month', from: undefined, to: undefined });
  });

  it('round-trips an audit view', () => {
    const query = new URLSearchParams({ range: '30d', outcome: 'policy_blocked', type: 'key.deleted' });
    const view = auditViewFromQuery(query, NOW);
    expect(view).toMatchObject({ outcome: 'policy_blocked', type: 'key.deleted', range: { preset: '30d' } });
    expect(auditViewToParams(view)).toEqual({ range: '30d', from: undefined, to: undefined, outcome: 'policy_blocked', type: 'key.deleted' });
    expect(auditViewFromQuery(new URLSearchParams({ outcome: 'meh' }), NOW)).toMatchObject({ outcome: '', range: { preset: '7d' } });
  });
});

describe('ranges, times and figures on the usage page', () => {
  it('makes "this month" run from local midnight on the 1st to now', () => {
    expect(thisMonth(NOW)).toEqual({ from: new Date(2026, 10, 1).getTime(), to: new Date(2026, 10, 23, 14, 6).getTime() });
    expect(resolveRange(presetChoice('month', NOW), NOW)).toEqual(thisMonth(NOW));
  });

  it("makes \"this month\" start on the 1st on a month's first and last day and across a year's end", () => {
    const minutes = (range: { from: number; to: number }) => (range.to - range.from) / 60_000;
    // Minutes after midnight on the 1st: the month so far is those minutes, charted by the minute.
    const first = new Date(2027, 2, 1, 0, 4, 30).getTime();
    expect(thisMonth(first)).toEqual({ from: new Date(2027, 2, 1).getTime(), to: new Date(2027, 2, 1, 0, 5).getTime() });
    expect(describeBucket(pickBucketMs(minutes(thisMonth(first)) * 60_000))).toBe('minute');
    // The last minute of February: 28 days, charted by the day.
    const last = new Date(2027, 1, 28, 23, 58, 10).getTime();
    expect(thisMonth(last)).toEqual({ from: new Date(2027, 1, 1).getTime(), to: new Date(2027, 1, 28, 23, 59).getTime() });
    expect(describeBucket(pickBucketMs(minutes(thisMonth(last)) * 60_000))).toBe('day');
    // New Year's Eve's last minute rounds up into the new year, and the range still starts on 1 December.
    const eve = new Date(2027, 11, 31, 23, 59, 30).getTime();
    expect(thisMonth(eve)).toEqual({ from: new Date(2027, 11, 1).getTime(), to: new Date(2028, 0, 1).getTime() });
    const newYear = new Date(2028, 0, 1, 6, 0).getTime();
    expect(thisMonth(newYear).from).toBe(new Date(2028, 0, 1).getTime());
    expect(describeBucket(pickBucketMs(minutes(thisMonth(newYear)) * 60_000))).toBe('5 minutes');
  });

  it('takes typed dates with a space or a T', () => {
    expect(fromLocalInputValue('2026-11-23 14:05')).toBe(new Date(2026, 10, 23, 14, 5).getTime());
    expect(fromLocalInputValue('2026-11-23T14:05')).toBe(new Date(2026, 10, 23, 14, 5).getTime());
    expect(fromLocalInputValue('23/11/2026 14:05')).toBeUndefined();
  });

  it('labels chart ticks with pieces of the one date format', () => {
    const at = new Date(2026, 10, 23, 14, 5).getTime();
    expect(formatTickTime(at, 5 * 60_000)).toBe('14:05');
    expect(formatTickTime(new Date(2026, 10, 23).getTime(), 3_600_000)).toBe('2026-11-23');
    expect(formatTickTime(at, 86_400_000)).toBe('2026-11-23');
  });

  it('aligns buckets to the local offset it is given', () => {
    const halfPast = 5.5 * 3_600_000;
    const from = Date.UTC(2026, 10, 23, 0, 0) - halfPast;
    const series = buildUsageSeries([], from, from + 2 * 86_400_000, 86_400_000, halfPast);
    // Local midnight in a UTC+05:30 zone is 18:30 UTC the day before.
    expect(series.starts.map((s) => new Date(s).toISOString())).toEqual(['2026-11-22T18:30:00.000Z', '2026-11-23T18:30:00.000Z']);
  });

  it('writes UTC offsets, shares and file names', () => {
    expect(utcOffset(NOW)).toMatch(/^UTC[+−]\d{2}:\d{2}$/);
    expect(formatShare(1, 1000)).toBe('<1%');
    expect(formatShare(537, 1000)).toBe('54%');
    expect(formatShare(0, 0)).toBe('0%');
  });
});
