import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeKeyRecord, hashApiKey, RedisKeys } from '@gateway/shared';
import { testRedisPrefix } from '../../../test-support/databases.js';
import { clearPrefix, testRedis } from '../../../test-support/redis.js';
import { KeyCache, ProjectionNotReady } from './key-cache.js';

const redis = testRedis();
const prefix = testRedisPrefix('keycache');
const keys = new RedisKeys(prefix);

beforeAll(async () => {
  await redis.set(keys.projectionReady, '1');
});

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
    // Known dead from then on, still named for the audit trail.
    expect(cache.lookup('h3', Date.now())).toBeNull();
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

  it('keeps a deleted key and the keys of a deleted project refused even while Redis still holds them', async () => {
    const cache = new KeyCache(redis, keys);
    await redis.set(keys.apiKey('d1'), record('kd1'));
    await redis.set(keys.apiKey('d2'), encodeKeyRecord({ id: 'kd2', project_id: 'gone', expires_at: null }));
    expect(await cache.lookup('d1', Date.now())).toMatchObject({ id: 'kd1' });
    // The deletion reached this proxy by the log stream; Redis (away meanwhile) still has the key.
    cache.keyDeleted('d1', 'kd1', 'p1');
    cache.projectDeleted('gone');
    expect(cache.lookup('d1', Date.now())).toBeNull();
    expect(await cache.lookup('d2', Date.now())).toBeNull();
    // Dropping the whole map (a gap on every channel) does not bring the dead back.
    cache.clear();
    expect(cache.lookup('d1', Date.now())).toBeNull();
    cache.forgetKey('d2');
    expect(await cache.lookup('d2', Date.now())).toBeNull();
    // A refusal of a deleted key can still be attributed to it.
    const presented = 'gw_deleted_presented_key';
    cache.keyDeleted(hashApiKey(presented), 'kd3', 'p3');
    expect(cache.deadRecord(presented)).toMatchObject({ id: 'kd3', project_id: 'p3' });
    expect(cache.deadRecord('gw_never_seen_key')).toBeNull();
  });

  it('does not take a miss for "no such key" on a Redis whose projection is not complete', async () => {
    const other = new RedisKeys(`${prefix}unready:`);
    const cache = new KeyCache(redis, other);
    // No marker: Redis restarted empty and the rebuild has not finished.
    await expect(cache.lookup('n1', Date.now())).rejects.toBeInstanceOf(ProjectionNotReady);
    // Nothing was remembered: once the rebuild has written the key and the marker, it is found.
    await redis.set(other.apiKey('n1'), record('kn1'));
    await redis.set(other.projectionReady, '1');
    expect(await cache.lookup('n1', Date.now())).toMatchObject({ id: 'kn1' });
    expect(await cache.lookup('n2', Date.now())).toBeNull();
  });
});
