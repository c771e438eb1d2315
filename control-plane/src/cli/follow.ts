import { setTimeout as sleep } from 'node:timers/promises';

/**
 * --follow: polls a record list for records newer than the start and hands over each one once,
 * until the signal (Ctrl-C) stops it. Records reach Postgres a little after their timestamp
 * (the proxies batch them, a writer stores them), so each poll reads again from LOOKBACK_MS before
 * the newest record seen, and the ids already shown are skipped.
 */
export const LOOKBACK_MS = 10_000;

export interface Stamped {
  id: string;
  timestamp: number;
}

export interface FollowOptions {
  /** Records at or after this instant (Unix ms) are shown. */
  since: number;
  intervalMs: number;
  signal: AbortSignal;
}

/** `fetchFrom` returns every record at or after `from`, oldest first. */
export async function follow<T extends Stamped>(fetchFrom: (from: number) => Promise<T[]>, show: (rows: T[]) => void, options: FollowOptions): Promise<void> {
  const shown = new Map<string, number>();
  let newest = options.since;
  try {
    while (!options.signal.aborted) {
      const from = Math.max(options.since, newest - LOOKBACK_MS);
      const fresh = (await fetchFrom(from)).filter((row) => !shown.has(row.id));
      for (const row of fresh) {
        shown.set(row.id, row.timestamp);
        newest = Math.max(newest, row.timestamp);
      }
      show(fresh);
      // What is older than this poll's window is never read again, so its ids need not be kept.
      for (const [id, timestamp] of shown) if (timestamp < from) shown.delete(id);
      await sleep(options.intervalMs, undefined, { signal: options.signal });
    }
  } catch (err) {
    if (!options.signal.aborted) throw err;
  }
}
