import { describe, expect, it } from 'vitest';
import { follow, LOOKBACK_MS, type Stamped } from './follow.js';

/** A record list whose rows arrive between polls, some of them late (older than rows already shown). */
describe('follow', () => {
  it('shows each record once, late ones included, and nothing from before the start', async () => {
    const since = 1_000_000;
    const stored: Stamped[] = [{ id: 'before', timestamp: since - 1 }];
    const arrivals: Stamped[][] = [
      [{ id: 'a', timestamp: since + 10 }],
      [{ id: 'b', timestamp: since + 20 }],
      // Written late: older than b, but within the look-back.
      [{ id: 'late', timestamp: since + 15 }],
      [],
    ];
    const froms: number[] = [];
    const shown: string[][] = [];
    const stop = new AbortController();
    await follow(
      async (from) => {
        froms.push(from);
        stored.push(...(arrivals.shift() ?? []));
        if (arrivals.length === 0) stop.abort();
        return stored.filter((r) => r.timestamp >= from).sort((x, y) => x.timestamp - y.timestamp);
      },
      (rows) => shown.push(rows.map((r) => r.id)),
      { since, intervalMs: 1, signal: stop.signal },
    );
    expect(shown).toEqual([['a'], ['b'], ['late'], []]);
    expect(froms.every((f) => f >= since)).toBe(true);
  });

  it('reads again from the look-back before the newest record, not from the start', async () => {
    const since = 0;
    const newest = 10 * LOOKBACK_MS;
    const froms: number[] = [];
    const stop = new AbortController();
    await follow(
      async (from) => {
        froms.push(from);
        if (froms.length === 2) stop.abort();
        return [{ id: 'n', timestamp: newest }];
      },
      () => {},
      { since, intervalMs: 1, signal: stop.signal },
    );
    expect(froms).toEqual([since, newest - LOOKBACK_MS]);
  });

  it('passes a failure on unless it was stopped', async () => {
    const stop = new AbortController();
    await expect(follow(async () => Promise.reject(new Error('boom')), () => {}, { since: 0, intervalMs: 1, signal: stop.signal })).rejects.toThrow('boom');
  });
});
