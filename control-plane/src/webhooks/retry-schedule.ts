/**
 * When a failed attempt is tried again: the delay before attempt n + 1 is DELAYS[n - 1], with
 * ±10 % jitter so endpoints that failed together are not retried in lockstep. Ten attempts over
 * about 21 hours; after the last, the delivery is `failed`.
 */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [
  5_000,
  30_000,
  2 * 60_000,
  10 * 60_000,
  60 * 60_000,
  2 * 60 * 60_000,
  4 * 60 * 60_000,
  6 * 60 * 60_000,
  8 * 60 * 60_000,
];

/** The delay after failed attempt `attempt` (1-based), or null when it was the last. */
export function retryDelay(delays: readonly number[], attempt: number, random: () => number = Math.random): number | null {
  const base = delays[attempt - 1];
  if (base === undefined) return null;
  return Math.round(base * (0.9 + random() * 0.2));
}
