import { afterAll, describe, expect, it } from 'vitest';
import { encodeKeyRecord, hashApiKey, RedisKeys } from '@gateway/shared';
import { testRedisPrefix } from '../../../test-support/databases.js';
import { clearPrefix, testRedis } from '../../../test-support/redis.js';
import { KeyCache } from './key-cache.js';

const redis = testRedis();
const prefix = testRedisPrefix('keycache');
const keys = new RedisKeys(prefix);

afterAll(async () => {
  await clearPrefix(redis, prefix);
  await redis.quit();
});

const record = (id: string, expires_at: number | null = null) => encodeKeyRecord({ id, project_id: 'p1', expires_at });

describe('KeyCache', () => {
  it('asks Redis once, then answers from memory until told otherwise', async () => {
    const cache = new KeyCache(redis, keys);
    await redis.set(keys.apiKey('h1'), record('k1'));
    const first = cache.lookup('h1', Date.now());
    expect(first).toBeInstanceOf(Promise);
    expect(await first).toMatchObject({ id: 'k1' });
    // Gone from Redis without a message: the cached answer stands (no round trip was made)...
    await redis.del(keys.apiKey('h1'));
    expect(cache.lookup('h1', Date.now())).toMatchObject({ id: 'k1' });
    // ...until the invalidation arrives.
    cache.forgetKey('h1');
    expect(await cache.lookup('h1', Date.now())).toBeNull();
  });

  it('remembers a presented key with its record, forgetting it on invalidation and at the bound', async () => {
    const cache = new KeyCache(redis, keys, { presentedMax: 2 });
    const presented = ['gw_presented_one', 'gw_presented_two', 'gw_presented_three'];
    for (const [i, key] of presented.entries()) await redis.set(keys.apiKey(hashApiKey(key)), record(`kp${i}`));
    expect(await cache.lookupPresented(presented[0]!, Date.now())).toMatchObject({ id: 'kp0' });
    // Known now: answered synchronously, with no hashing of the same key again.
    expect(cache.lookupPresented(presented[0]!, Date.now())).toMatchObject({ id: 'kp0' });
    expect(cache.peekPresented(presented[0]!)).toMatchObject({ id: 'kp0' });
    // Deleted from Redis and announced: the presented entry goes with the hash.
    await redis.del(keys.apiKey(hashApiKey(presented[0]!)));
    cache.forgetKey(hashApiKey(presented[0]!));
    expect(cache.peekPresented(presented[0]!)).toBeNull();
    expect(await cache.lookupPresented(presented[0]!, Date.now())).toBeNull();
    // Project deletion and a full reset reach presented keys too.
    await cache.lookupPresented(presented[1]!, Date.now());
    expect(cache.lookupPresented(presented[1]!, Date.now())).toMatchObject({ id: 'kp1' });
    cache.forgetProject('p1');
    expect(cache.peekPresented(presented[1]!)).toBeNull();
  });

  it('remembers unknown keys until a key.created says otherwise', async () => {
    const cache = new KeyCache(redis, keys);
    expect(await cache.lookup('h2', Date.now())).toBeNull();
    await redis.set(keys.apiKey('h2'), record('k2'));
    expect(cache.lookup('h2', Date.now())).toBeNull();
    cache.forgetKey('h2');
    expect(await cache.lookup('h2', Date.now())).toMatchObject({ id: 'k2' });
  });

  it('forgets unknown keys after their TTL and bounds how many it remembers', async () => {
    const cache = new KeyCache(redis, keys, { negativeTtlMs: 1_000, negativeMax: 2 });
    const now = Date.now();
    expect(await cache.lookup('u1', now)).toBeNull();
    await redis.set(keys.apiKey('u1'), record('ku1'));
    expect(cache.lookup('u1', now + 500)).toBeNull();
    expect(await cache.lookup('u1', now + 5_000)).toMatchObject({ id: 'ku1' });
    await cache.lookup('u2', now);
    await cache.lookup('u3', now);
    await redis.set(keys.apiKey('u2'), record('ku2'));
    await cache.lookup('u4', now);
    // u2 was the oldest unknown entry once the bound was hit, so it is asked again.
    expect(await cache.lookup('u2', now)).toMatchObject({ id: 'ku2' });
  });

  it('treats an expired key as unknown', async () => {
    const cache = new KeyCache(redis, keys);
    const expiresAt = Date.now() + 60_000;
    await redis.set(keys.apiKey('h3'), record('k3', expiresAt));
    expect(await cache.lookup('h3', Date.now())).toMatchObject({ id: 'k3' });
    expect(cache.lookup('h3', expiresAt + 1)).toBeNull();
  });

  it('refuses a record of an unknown contract version rather than misread it', async () => {
    const cache = new KeyCache(redis, keys);
    await redis.set(keys.apiKey('h4'), JSON.stringify({ v: 99, id: 'k4', project_id: 'p' }));
    expect(await cache.lookup('h4', Date.now())).toBeNull();
  });

  it('fetches again when an invalidation lands while a lookup is in flight', async () => {
    const cache = new KeyCache(redis, keys);
    await redis.set(keys.apiKey('h5'), record('k5'));
    const pending = cache.lookup('h5', Date.now());
    // While that GET is on the wire (its answer still shows the key), the key is deleted and the
    // deletion announced: the stale answer must not be believed.
    const deleted = redis.del(keys.apiKey('h5'));
    cache.forgetKey('h5');
    expect(await pending).toBeNull();
    await deleted;
    expect(await cache.lookup('h5', Date.now())).toBeNull();
  });
});
