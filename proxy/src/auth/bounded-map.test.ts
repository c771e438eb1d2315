import { describe, expect, it } from 'vitest';
import { BoundedMap } from './bounded-map.js';

describe('BoundedMap', () => {
  it('holds at most max entries, dropping the oldest insertion first and telling of it', () => {
    const evicted: [string, number][] = [];
    const map = new BoundedMap<string, number>(3, (k, v) => evicted.push([k, v]));
    for (const [i, k] of ['a', 'b', 'c', 'd', 'e'].entries()) map.set(k, i);
    expect(map.size).toBe(3);
    expect([...map]).toEqual([['c', 2], ['d', 3], ['e', 4]]);
    expect(evicted).toEqual([['a', 0], ['b', 1]]);
  });

  it('keeps a key set again in its place with the new value, as a Map does', () => {
    const map = new BoundedMap<string, number>(2);
    map.set('a', 1);
    map.set('b', 2);
    map.set('a', 3);
    map.set('c', 4);
    expect([...map]).toEqual([['b', 2], ['c', 4]]);
  });

  it('drops a key deleted and set again only when its latest insertion is the oldest', () => {
    const map = new BoundedMap<string, number>(3);
    map.set('a', 1);
    map.delete('a');
    map.set('b', 2);
    map.set('a', 3);
    // The oldest slot still names "a", but "a" now lives in the newest one: nothing is dropped.
    map.set('c', 4);
    expect([...map]).toEqual([['b', 2], ['a', 3], ['c', 4]]);
    map.set('d', 5);
    expect(map.has('b')).toBe(false);
    map.set('e', 6);
    expect(map.has('a')).toBe(false);
    expect([...map]).toEqual([['c', 4], ['d', 5], ['e', 6]]);
  });

  it('starts over after clear', () => {
    const map = new BoundedMap<string, number>(2);
    map.set('a', 1);
    map.set('b', 2);
    map.clear();
    map.set('c', 3);
    map.set('d', 4);
    expect([...map]).toEqual([['c', 3], ['d', 4]]);
  });

  it('refuses a bound below one', () => {
    expect(() => new BoundedMap(0)).toThrow(RangeError);
  });
});
