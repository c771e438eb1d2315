import { describe, expect, it } from 'vitest';
import type { UsageRecord } from '../../dashboard/src/api/types.js';
import { collectPages } from '../../dashboard/src/lib/collect-pages.js';
import {
  fromLocalInputValue,
  lastSpan,
  presetChoice,
  rangeProblem,
  resolveRange,
  toLocalInputValue,
  toQueryString,
} from '../../dashboard/src/lib/record-query.js';
import { buildUsageSeries, describeBucket, describeSeries, pickBucketMs, seriesFromPoints } from '../../dashboard/src/lib/usage-series.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

function record(timestamp: number, model: string, input: number, output: number): UsageRecord {
  return {
    id: `r-${timestamp}-${model}`,
    request_id: 'req',
    project_id: 'p',
    key_id: 'k',
    timestamp,
    model,
    provider: 'mock',
    tokens: { input, output, total: input + output, cached: 0, cache_write: 0 },
    cost_usd: null,
    latency_ms: 5,
    finish_reason: 'stop',
    provider_finish_reason: null,
    stream: false,
    endpoint: 'chat.completions',
    tags: {},
    end_user: null,
    cache_hit: false,
    saved_usd: null,
    requested_model: null,
    batch_id: null,
  };
}

describe('usage series', () => {
  it('reads the same series from the database\'s buckets as from the records themselves', () => {
    const from = 10 * HOUR;
    const to = from + HOUR;
    const align = 30 * MINUTE;
    const records = [record(from, 'small', 1, 1), record(from + 30_000, 'big', 10, 20), record(from + 61_000, 'big', 5, 5), record(to - 1, 'small', 2, 2)];
    // What GET /v1/usage/series answers for these records: one point per bucket and model.
    const points = new Map<string, { start: number; model: string; requests: number; tokens: UsageRecord['tokens']; cost_usd: null }>();
    for (const r of records) {
      const start = Math.floor((r.timestamp + align) / (5 * MINUTE)) * 5 * MINUTE - align;
      const point = points.get(`${start}/${r.model}`) ?? { start, model: r.model, requests: 0, tokens: { input: 0, output: 0, total: 0, cached: 0, cache_write: 0 }, cost_usd: null };
      point.requests += 1;
      point.tokens.input += r.tokens.input;
      point.tokens.output += r.tokens.output;
      point.tokens.total += r.tokens.total;
      points.set(`${start}/${r.model}`, point);
    }
    const fromPoints = seriesFromPoints([...points.values()], from, to, 5 * MINUTE, align);
    expect(fromPoints).toEqual(buildUsageSeries(records, from, to, 5 * MINUTE, align));
    expect(fromPoints.totals).toEqual({ requests: 4, input: 18, output: 28, total: 46 });
    // A point outside the range (a clock that moved on) is left out rather than drawn at an edge.
    expect(seriesFromPoints([{ start: to + HOUR, model: 'x', requests: 1, tokens: { input: 1, output: 1, total: 2, cached: 0 }, cost_usd: null }], from, to, 5 * MINUTE).totals.requests).toBe(0);
  });

  it('picks the bucket from the range: minutes for an hour, 5 minutes for a day, hours for a week, days for a month', () => {
    expect(pickBucketMs(HOUR)).toBe(MINUTE);
    expect(pickBucketMs(4 * HOUR)).toBe(MINUTE);
    expect(pickBucketMs(6 * HOUR)).toBe(5 * MINUTE);
    expect(pickBucketMs(24 * HOUR)).toBe(5 * MINUTE);
    expect(pickBucketMs(25 * HOUR)).toBe(5 * MINUTE);
    expect(pickBucketMs(7 * 24 * HOUR)).toBe(HOUR);
    expect(pickBucketMs(30 * 24 * HOUR)).toBe(24 * HOUR);
    expect(pickBucketMs(31 * 24 * HOUR)).toBe(24 * HOUR);
    expect(pickBucketMs(10 * 365 * 24 * HOUR)).toBe(7 * 24 * HOUR);
    expect([MINUTE, 15 * MINUTE, HOUR, 3 * HOUR, 24 * HOUR].map(describeBucket)).toEqual(['minute', '15 minutes', 'hour', '3 hours', 'day']);
  });

  it('adds up tokens per model per bucket, busiest model first, and totals the range', () => {
    const from = 10 * HOUR;
    const to = from + HOUR;
    const records = [
      record(from, 'small', 1, 1),
      record(from + 30_000, 'big', 10, 20),
      record(from + 61_000, 'big', 5, 5),
      record(to - 1, 'small', 2, 2),
      // Outside [from, to): not counted.
      record(to, 'big', 100, 100),
      record(from - 1, 'big', 100, 100),
    ];
    const series = buildUsageSeries(records, from, to);
    expect(series.bucketMs).toBe(MINUTE);
    expect(series.starts).toHaveLength(60);
    expect(series.starts[0]).toBe(from);
    expect(series.models).toEqual(['big', 'small']);
    expect(series.values[0]!.slice(0, 2)).toEqual([30, 10]);
    expect(series.values[1]![0]).toBe(2);
    expect(series.values[1]![59]).toBe(4);
    expect(series.totals).toEqual({ requests: 4, input: 18, output: 28, total: 46 });
    expect(series.byModel).toEqual([
      { model: 'big', requests: 2, input: 15, output: 25, total: 40 },
      { model: 'small', requests: 2, input: 3, output: 3, total: 6 },
    ]);
    expect(describeSeries(series)).toContain('big used the most (40 tokens)');
  });

  it('aligns buckets to their width, so a range that starts mid-bucket still counts its first records', () => {
    const from = 10 * HOUR + 20_000;
    const series = buildUsageSeries([record(from + 1, 'm', 1, 1)], from, from + 5 * MINUTE, MINUTE);
    expect(series.starts[0]).toBe(10 * HOUR);
    expect(series.values[0]![0]).toBe(2);
  });

  it('describes an empty range', () => {
    expect(describeSeries(buildUsageSeries([], 0, HOUR))).toBe('No usage in this range.');
  });
});

describe('list queries and ranges', () => {
  it('leaves empty filters out of the query string', () => {
    expect(toQueryString({ project_id: null, model: ' ', provider: undefined, limit: 50, finish_reason: 'stop', cursor: 'a+b/c' })).toBe(
      '?limit=50&finish_reason=stop&cursor=a%2Bb%2Fc',
    );
    expect(toQueryString({})).toBe('');
  });

  it('round-trips datetime-local values in local time and refuses impossible dates', () => {
    const ms = new Date(2025, 2, 4, 5, 6).getTime();
    expect(toLocalInputValue(ms)).toBe('2025-03-04T05:06');
    expect(fromLocalInputValue('2025-03-04T05:06')).toBe(ms);
    expect(fromLocalInputValue('2025-03-04T05:06:07')).toBe(ms + 7_000);
    expect(fromLocalInputValue('2025-02-31T00:00')).toBeUndefined();
    expect(fromLocalInputValue('')).toBeUndefined();
    expect(fromLocalInputValue('yesterday')).toBeUndefined();
  });

  it('rounds a preset range out to whole minutes, including the current one', () => {
    const now = Date.UTC(2025, 0, 1, 12, 30, 15);
    expect(lastSpan(HOUR, now)).toEqual({ from: Date.UTC(2025, 0, 1, 11, 31), to: Date.UTC(2025, 0, 1, 12, 31) });
    expect(resolveRange(presetChoice('24h', now), now)).toEqual({ from: Date.UTC(2024, 11, 31, 12, 31), to: Date.UTC(2025, 0, 1, 12, 31) });
  });

  it('checks a custom range before asking the API', () => {
    expect(resolveRange({ preset: 'custom', from: '2025-01-01T00:00', to: '2025-01-02T00:00' }, 0)).toEqual({
      from: new Date(2025, 0, 1).getTime(),
      to: new Date(2025, 0, 2).getTime(),
    });
    expect(resolveRange({ preset: 'custom', from: '2025-01-02T00:00', to: '2025-01-01T00:00' }, 0)).toEqual({ problem: '"From" must be before "To".' });
    expect(resolveRange({ preset: 'custom', from: '', to: '2025-01-01T00:00' }, 0)).toEqual({ problem: 'Enter a valid "From" date and time.' });
    expect(rangeProblem({ from: 1 })).toBeNull();
  });
});

describe('walking a keyset-paged list', () => {
  it('follows next_cursor to the end', async () => {
    const pages = new Map<string | null, { data: number[]; next_cursor: string | null; has_more: boolean }>([
      [null, { data: [1, 2], next_cursor: 'a', has_more: true }],
      ['a', { data: [3, 4], next_cursor: 'b', has_more: true }],
      ['b', { data: [5], next_cursor: null, has_more: false }],
    ]);
    const seen: (string | null)[] = [];
    const result = await collectPages(async (cursor) => {
      seen.push(cursor);
      return pages.get(cursor)!;
    }, 10);
    expect(result).toEqual({ items: [1, 2, 3, 4, 5], complete: true });
    expect(seen).toEqual([null, 'a', 'b']);
  });

  it('stops after the page limit and says the sums are partial', async () => {
    let calls = 0;
    const result = await collectPages(async () => {
      calls += 1;
      return { data: [calls], next_cursor: `c${calls}`, has_more: true };
    }, 3);
    expect(result).toEqual({ items: [1, 2, 3], complete: false });
  });
});

describe('usage chart lines', () => {
  it('draws each line wider, with larger dots, than every line drawn over it, so equal lines never hide one another', async () => {
    const { lineStyle } = await import('../../dashboard/src/lib/chart-lines.js');
    for (const count of [2, 3, 7]) {
      const styles = Array.from({ length: count }, (_, i) => lineStyle(i, count));
      // The last four lines drawn are layered; past that a line stops growing (a dash still tells them apart).
      for (let i = Math.max(0, count - 4); i + 1 < count; i++) {
        expect(styles[i]!.width, `line ${i} of ${count}`).toBeGreaterThan(styles[i + 1]!.width);
        expect(styles[i]!.pointSize).toBeGreaterThan(styles[i + 1]!.pointSize);
      }
      expect(new Set(styles.slice(0, 4).map((s) => JSON.stringify(s.dash))).size).toBe(Math.min(count, 4));
      expect(new Set(styles.slice(-4).map((s) => JSON.stringify(s.dash))).size).toBe(Math.min(count, 4));
      expect(Math.max(...styles.map((s) => s.width))).toBeLessThanOrEqual(8);
    }
  });
});
