import { Redis } from 'ioredis';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, describe, expect, it } from 'vitest';
import { RedisKeys, type CacheEntry } from '@gateway/shared';
import { ResponseCache } from './response-cache.js';

/**
 * This proxy's own copies of cache entries (CACHE_LOCAL_BYTES): bounded in bytes, oldest dropped
 * first, an entry stored again taking the newest place, expired ones never served. None of this
 * asks Redis: the client below never connects.
 */
const redis = new Redis({ lazyConnect: true });
afterAll(() => redis.disconnect());

/** Each entry counts its body plus 400 bytes of overhead: 100-byte bodies make 500-byte entries. */
const ENTRY_BYTES = 500;

function entry(created: number): CacheEntry {
  return { v: 1, kind: 'chat', created_at: created, body: Buffer.alloc(100, 'x'), provider: 'p', usage: { input: 1, output: 1, cached: 0 }, finish_reason: 'stop', raw_finish_reason: 'stop', cost_usd: null };
}

function cache(entries: number): ResponseCache {
  return new ResponseCache(redis, new RedisKeys('rc-test:'), 256 * 1024, new Registry(), pino({ level: 'silent' }), entries * ENTRY_BYTES);
}

const FAR = Date.now() + 3_600_000;

describe('ResponseCache: entries held in this proxy', () => {
  it('holds up to its bytes, dropping the oldest first', () => {
    const c = cache(3);
    for (const name of ['a', 'b', 'c', 'd']) c.remember(name, entry(1), FAR);
    expect(c.peek('a', Date.now())).toBeNull();
    expect(['b', 'c', 'd'].map((n) => c.peek(n, Date.now()) !== null)).toEqual([true, true, true]);
    expect(c.held).toEqual({ entries: 3, bytes: 3 * ENTRY_BYTES });
  });

  it('gives an entry stored again the newest place', () => {
    const c = cache(3);
    for (const name of ['a', 'b', 'c']) c.remember(name, entry(1), FAR);
    c.remember('a', entry(2), FAR);
    c.remember('d', entry(1), FAR);
    expect(c.peek('b', Date.now())).toBeNull();
    expect(c.peek('a', Date.now())?.created_at).toBe(2);
    expect(c.held).toEqual({ entries: 3, bytes: 3 * ENTRY_BYTES });
  });

  it('serves no expired entry, and its bytes make room again', () => {
    const c = cache(2);
    c.remember('old', entry(1), Date.now() - 1);
    c.remember('live', entry(1), FAR);
    expect(c.peek('old', Date.now())).toBeNull();
    expect(c.held.entries).toBe(1);
    c.remember('new', entry(1), FAR);
    expect(['live', 'new'].map((n) => c.peek(n, Date.now()) !== null)).toEqual([true, true]);
  });

  it('holds exactly what a plain first-in first-out list would, through long churn of stores, replacements and expiries', () => {
    const c = cache(50);
    const now = Date.now();
    // The reference: a Map in insertion order, evicted from its front (slow, and plainly right).
    const ref = new Map<string, number>();
    const remember = (name: string, expiresAt: number) => {
      c.remember(name, entry(1), expiresAt);
      ref.delete(name);
      while (ref.size >= 50) ref.delete(ref.keys().next().value as string);
      ref.set(name, expiresAt);
    };
    const peek = (name: string) => {
      const expiry = ref.get(name);
      if (expiry !== undefined && expiry <= now) ref.delete(name);
      return c.peek(name, now) !== null;
    };
    for (let i = 0; i < 20_000; i++) {
      remember(`k${i}`, i % 7 === 0 ? now - 1 : FAR);
      if (i % 5 === 0) remember(`k${i - 3}`, FAR);
      if (i % 11 === 0) peek(`k${i - 1}`);
    }
    expect(c.held.bytes).toBe(c.held.entries * ENTRY_BYTES);
    expect(c.held.entries).toBe(ref.size);
    const held = (name: string) => (ref.get(name) ?? 0) > now;
    for (let i = 19_800; i < 20_000; i++) expect(peek(`k${i}`), `k${i}`).toBe(held(`k${i}`));
  });

  it("forgets a project's entries", () => {
    const c = cache(10);
    c.remember('gw:cache:{p1}:chat:x', entry(1), FAR);
    c.remember('gw:cache:{p2}:chat:y', entry(1), FAR);
    c.forgetProject('p1');
    expect(c.peek('gw:cache:{p1}:chat:x', Date.now())).toBeNull();
    expect(c.peek('gw:cache:{p2}:chat:y', Date.now())).not.toBeNull();
  });

  it('holds nothing with no memory for it', () => {
    const c = cache(0);
    c.remember('a', entry(1), FAR);
    expect(c.peek('a', Date.now())).toBeNull();
    expect(c.held).toEqual({ entries: 0, bytes: 0 });
  });
});
