import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { encodeInvalidation, encodeKeyRecord, encodeProjectPolicy, generateApiKey, type ProjectPolicy, type RedisClient, type RedisKeys } from '@gateway/shared';

/**
 * Data-plane scenarios need a valid key but no control plane (its Postgres would compete for the
 * cores during the window): the key is projected into Redis exactly as the control plane writes
 * it, record first and invalidation second.
 */
export interface BenchKey {
  key: string;
  hash: string;
  id: string;
  projectId: string;
}

/**
 * Every feature on, none of them refusing: a token quota and every rate limit are set, far above
 * what a run can use, so each request is admitted through the quota lease and all four rate-limit
 * windows, as in a production project.
 */
const FULL_POLICY = {
  quota_tokens: 1e15,
  quota_period: 'total' as const,
  rate_limits: { key_rpm: 1e12, key_tpm: 1e15, project_rpm: 1e12, project_tpm: 1e15 },
  allowed_models: null,
  max_tokens_cap: null,
};

export async function projectKey(redis: RedisClient, keys: RedisKeys, settings: Partial<Omit<ProjectPolicy, 'v' | 'id'>> = {}): Promise<BenchKey> {
  const generated = generateApiKey();
  const id = randomUUID();
  const projectId = randomUUID();
  // One write per key name: on a Redis Cluster the key record and the project's keys sit in
  // different slots. The policy goes first, so the key is never found without it.
  await redis.set(keys.projectPolicy(projectId), encodeProjectPolicy({ id: projectId, ...FULL_POLICY, ...settings }));
  await redis.sadd(keys.projectKeys(projectId), generated.hash);
  await redis.set(keys.apiKey(generated.hash), encodeKeyRecord({ id, project_id: projectId, expires_at: null }));
  // No control plane in the benchmarks: the projection is complete once written (an unknown key is then 401).
  await redis.set(keys.projectionReady, String(Date.now()));
  await redis.publish(keys.invalidationChannel, encodeInvalidation({ kind: 'key.created', key_hash: generated.hash, key_id: id, project_id: projectId }));
  return { key: generated.key, hash: generated.hash, id, projectId };
}

/** Deletes every Redis key under the run's prefix (projection, queue, everything). */
export async function clearPrefix(redis: Redis, prefix: string): Promise<number> {
  let cursor = '0';
  let removed = 0;
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (batch.length > 0) removed += await redis.del(...batch);
  } while (cursor !== '0');
  return removed;
}
