import type { UsageRecord, UsageSeriesAnswer } from '../api/types.js';
import { formatDateTime, formatNumber } from './format.js';

/**
 * Usage records turned into what the chart shows: total tokens per model per time bucket. The
 * totals on the page come from GET /v1/usage/summary, which sums in the database but not per
 * time bucket, so for the chart the dashboard pages through the records of the range and buckets
 * them here (the sums kept here describe the chart to screen readers).
 */
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * Bucket widths people read easily, smallest first: the last hour by the minute, a day in 5-minute
 * steps, a week by the hour, a month or more by the day. Anything coarser hides the shape of the
 * traffic (a day in 15-minute or 3-hour steps turns a busy hour into one spike on a flat line).
 */
export const BUCKET_LADDER_MS = [MINUTE, 5 * MINUTE, HOUR, DAY, 7 * DAY] as const;

/** A day in 5-minute steps (288) still reads as a line; a 30-day month by the hour (720) does not. */
const MAX_BUCKETS = 300;

export function pickBucketMs(rangeMs: number): number {
  for (const width of BUCKET_LADDER_MS) if (rangeMs / width <= MAX_BUCKETS) return width;
  return BUCKET_LADDER_MS[BUCKET_LADDER_MS.length - 1]!;
}

export function describeBucket(ms: number): string {
  if (ms % DAY === 0) return ms === DAY ? 'day' : `${ms / DAY} days`;
  if (ms % HOUR === 0) return ms === HOUR ? 'hour' : `${ms / HOUR} hours`;
  return ms === MINUTE ? 'minute' : `${ms / MINUTE} minutes`;
}

export interface Totals {
  requests: number;
  input: number;
  output: number;
  total: number;
}

export interface ModelTotals extends Totals {
  model: string;
}

export interface UsageSeries {
  bucketMs: number;
  /** Bucket starts, Unix ms. */
  starts: number[];
  /** Models, busiest first. */
  models: string[];
  /** values[m][b]: total tokens of models[m] in bucket b. */
  values: number[][];
  totals: Totals;
  byModel: ModelTotals[];
}

const zero = (): Totals => ({ requests: 0, input: 0, output: 0, total: 0 });

function add(into: Totals, record: UsageRecord): void {
  into.requests += 1;
  into.input += record.tokens.input;
  into.output += record.tokens.output;
  into.total += record.tokens.total;
}

/**
 * Buckets start at multiples of their width since the epoch, shifted by `alignMs` (the page passes
 * the local UTC offset, so day buckets start at local midnight and hour buckets on the local hour
 * in zones half an hour off UTC). All buckets are equally wide: around a DST change a day bucket
 * starts an hour off midnight rather than lasting 23 or 25 hours. Records outside [from, to) are
 * ignored; the list was asked for the same bounds, so none should be there.
 */
export function buildUsageSeries(records: readonly UsageRecord[], from: number, to: number, bucketMs = pickBucketMs(to - from), alignMs = 0): UsageSeries {
  const first = Math.floor((from + alignMs) / bucketMs) * bucketMs - alignMs;
  const count = Math.max(1, Math.ceil((to - first) / bucketMs));
  const starts = Array.from({ length: count }, (_, i) => first + i * bucketMs);

  const totals = zero();
  const perModel = new Map<string, { totals: Totals; buckets: number[] }>();
  for (const record of records) {
    if (record.timestamp < from || record.timestamp >= to) continue;
    let entry = perModel.get(record.model);
    if (entry === undefined) {
      entry = { totals: zero(), buckets: new Array<number>(count).fill(0) };
      perModel.set(record.model, entry);
    }
    const bucket = Math.min(count - 1, Math.floor((record.timestamp - first) / bucketMs));
    entry.buckets[bucket]! += record.tokens.total;
    add(entry.totals, record);
    add(totals, record);
  }

  const byModel = [...perModel.entries()]
    .map(([model, entry]) => ({ model, ...entry.totals }))
    .sort((a, b) => b.total - a.total || a.model.localeCompare(b.model));
  const models = byModel.map((m) => m.model);
  return { bucketMs, starts, models, values: models.map((m) => perModel.get(m)!.buckets), totals, byModel };
}

/** A one-sentence account of the chart for screen readers, which cannot see the lines. */
export function describeSeries(series: UsageSeries): string {
  if (series.totals.requests === 0) return 'No usage in this range.';
  const busiest = series.byModel[0]!;
  let peak = 0;
  let peakAt = 0;
  series.starts.forEach((start, i) => {
    const sum = series.values.reduce((s, row) => s + (row[i] ?? 0), 0);
    if (sum > peak) {
      peak = sum;
      peakAt = start;
    }
  });
  const models = series.models.length === 1 ? '1 model' : `${series.models.length} models`;
  return `Total tokens per ${describeBucket(series.bucketMs)} for ${models}; ${busiest.model} used the most (${formatNumber(busiest.total)} tokens); the busiest ${describeBucket(series.bucketMs)} began ${formatDateTime(peakAt)} with ${formatNumber(peak)} tokens.`;
}

/**
 * The same series from GET /v1/usage/series, which sums per bucket in the database: every record
 * of the range counts, however many there are. The points must use the same bucket width and
 * alignment as asked for here.
 */
export function seriesFromPoints(points: UsageSeriesAnswer<'model'>['data'], from: number, to: number, bucketMs: number, alignMs = 0): UsageSeries {
  const first = Math.floor((from + alignMs) / bucketMs) * bucketMs - alignMs;
  const count = Math.max(1, Math.ceil((to - first) / bucketMs));
  const starts = Array.from({ length: count }, (_, i) => first + i * bucketMs);
  const totals = zero();
  const perModel = new Map<string, { totals: Totals; buckets: number[] }>();
  for (const point of points) {
    const bucket = Math.round((point.start - first) / bucketMs);
    if (bucket < 0 || bucket >= count) continue;
    let entry = perModel.get(point.model);
    if (entry === undefined) {
      entry = { totals: zero(), buckets: new Array<number>(count).fill(0) };
      perModel.set(point.model, entry);
    }
    entry.buckets[bucket]! += point.tokens.total;
    for (const into of [entry.totals, totals]) {
      into.requests += point.requests;
      into.input += point.tokens.input;
      into.output += point.tokens.output;
      into.total += point.tokens.total;
    }
  }
  const byModel = [...perModel.entries()]
    .map(([model, entry]) => ({ model, ...entry.totals }))
    .sort((a, b) => b.total - a.total || a.model.localeCompare(b.model));
  const models = byModel.map((m) => m.model);
  return { bucketMs, starts, models, values: models.map((m) => perModel.get(m)!.buckets), totals, byModel };
}
