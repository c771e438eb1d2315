import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { encodeInvalidation, encodeKeyRecord, generateApiKey, RedisKeys } from '@gateway/shared';
import { TEST_REDIS_URL } from './databases.js';

/** Redis access for tests that drive a proxy without a control plane (the projection by hand). */
export function testRedis(): Redis {
  return new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 3 });
}

export interface TestKey {
  key: string;
  hash: string;
  id: string;
  projectId: string;
}

/** Writes a key into the projection exactly as the control plane does, and announces it. */
export async function projectTestKey(redis: Redis, keys: RedisKeys, options: { projectId?: string; expiresAt?: number | null; tags?: Record<string, string> } = {}): Promise<TestKey> {
  const generated = generateApiKey();
  const id = randomUUID();
  const projectId = options.projectId ?? randomUUID();
  await redis.set(keys.apiKey(generated.hash), encodeKeyRecord({ id, project_id: projectId, expires_at: options.expiresAt ?? null, tags: options.tags ?? null }));
  await redis.sadd(keys.projectKeys(projectId), generated.hash);
  await markProjectionReady(redis, keys);
  await redis.publish(keys.invalidationChannel, encodeInvalidation({ kind: 'key.created', key_hash: generated.hash, key_id: id, project_id: projectId }));
  return { key: generated.key, hash: generated.hash, id, projectId };
}

/** Says the projection is complete, as the control plane does after a rebuild: a miss is then "no such key". */
export async function markProjectionReady(redis: Redis, keys: RedisKeys): Promise<void> {
  await redis.set(keys.projectionReady, String(Date.now()));
}

/** Deletes a key from the projection and publishes the invalidation, in the control plane's order. */
export async function deleteTestKey(redis: Redis, keys: RedisKeys, key: TestKey): Promise<void> {
  await redis.del(keys.apiKey(key.hash));
  await redis.srem(keys.projectKeys(key.projectId), key.hash);
  await redis.publish(keys.invalidationChannel, encodeInvalidation({ kind: 'key.deleted', key_hash: key.hash, key_id: key.id, project_id: key.projectId }));
}

/** Removes every key under a test's prefix. */
export async function clearPrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (batch.length > 0) await redis.del(...batch);
  } while (cursor !== '0');
}
