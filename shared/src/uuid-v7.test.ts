import { describe, expect, it } from 'vitest';
import { uuidV7 } from './uuid-v7.js';

const FORMAT = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function millisecondOf(id: string): number {
  return parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}

describe('uuidV7', () => {
  it('is a version 7, variant 10 UUID carrying the time in milliseconds', () => {
    const before = Date.now();
    const id = uuidV7();
    const after = Date.now();
    expect(id).toMatch(FORMAT);
    expect(millisecondOf(id)).toBeGreaterThanOrEqual(before);
    expect(millisecondOf(id)).toBeLessThanOrEqual(after + 1);
  });

  it('sorts in the order made and never repeats, many to a millisecond', () => {
    const ids = Array.from({ length: 200_000 }, () => uuidV7());
    for (const id of ids.slice(0, 1000)) expect(id).toMatch(FORMAT);
    for (let i = 1; i < ids.length; i++) if (!(ids[i - 1]! < ids[i]!)) expect.fail(`${ids[i - 1]} then ${ids[i]}`);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('keeps order past 4,096 ids in one millisecond and when the clock steps back', () => {
    const start = Date.now() + 60_000;
    const ids = Array.from({ length: 10_000 }, () => uuidV7(start));
    ids.push(uuidV7(start - 5_000), uuidV7(start + 1));
    for (let i = 1; i < ids.length; i++) expect(ids[i - 1]! < ids[i]!).toBe(true);
    // The overflow borrowed the next milliseconds, no further than it needed.
    expect(millisecondOf(ids[ids.length - 1]!) - start).toBeLessThanOrEqual(4);
    for (const id of ids) expect(id).toMatch(FORMAT);
  });

  it('spends its random bits: ids of one millisecond differ past the counter', () => {
    const at = Date.now() + 120_000;
    const tails = new Set(Array.from({ length: 1000 }, () => uuidV7(at).slice(19)));
    expect(tails.size).toBe(1000);
  });
});
