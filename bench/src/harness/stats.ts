/**
 * Summary statistics. Percentiles use the nearest-rank definition (the value of a real sample,
 * never an interpolation between two), so a p99 over 100 samples is the slowest but one.
 */
export interface Summary {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}

export function summarise(samples: ArrayLike<number>): Summary {
  const sorted = Float64Array.from(samples).sort();
  let sum = 0;
  for (let i = 0; i < sorted.length; i++) sum += sorted[i] as number;
  return {
    count: sorted.length,
    mean: sorted.length === 0 ? Number.NaN : sum / sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length === 0 ? Number.NaN : (sorted[sorted.length - 1] as number),
  };
}

/** Median of per-round values: one disturbed round on a shared machine cannot move it. */
export function median(values: readonly number[]): number {
  const finite = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (finite.length === 0) return Number.NaN;
  const mid = finite.length >> 1;
  return finite.length % 2 === 1 ? (finite[mid] as number) : ((finite[mid - 1] as number) + (finite[mid] as number)) / 2;
}

/** The median of each field over rounds of summaries. */
export function medianSummary(rounds: readonly Summary[]): Summary {
  const pick = (field: keyof Summary) => median(rounds.map((r) => r[field]));
  return { count: rounds.reduce((n, r) => n + r.count, 0), mean: pick('mean'), p50: pick('p50'), p90: pick('p90'), p99: pick('p99'), max: pick('max') };
}

/** Target orders: for each round, the targets rotated by one, so no target always runs first. */
export function rotations<T>(items: readonly T[], rounds: number): T[][] {
  const out: T[][] = [];
  for (let r = 0; r < rounds; r++) out.push(items.map((_, i) => items[(i + r) % items.length] as T));
  return out;
}
