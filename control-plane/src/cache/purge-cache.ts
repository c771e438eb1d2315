import type { RedisClient, RedisKeys } from '@gateway/shared';

/** Entry names deleted per round trip: each round is one MULTI on the project's slot, short enough not to stall Redis. */
const BATCH = 500;

/**
 * Deletes every response-cache entry of a project (DESIGN §7 "Response cache"), found through its
 * index (RedisKeys.cacheIndex) rather than a SCAN of the keyspace: the index and the entries share
 * the project's hash tag, so each batch is one MULTI on one node of a cluster. Time is
 * proportional to the project's live entries, in batches of 500. An entry a proxy stores while this
 * runs joins the index and is taken by a later batch; one stored after it returns is a new entry.
 * Returns how many entries were named in the index (expired ones included).
 */
export async function purgeProjectCache(redis: RedisClient, keys: RedisKeys, projectId: string): Promise<number> {
  const index = keys.cacheIndex(projectId);
  // Bounded: proxies storing without pause cannot keep a purge going forever.
  const rounds = Math.ceil((await redis.zcard(index)) / BATCH) + 2;
  let purged = 0;
  for (let round = 0; round < rounds; round++) {
    const names = await redis.zrange(index, 0, BATCH - 1);
    if (names.length === 0) break;
    await redis.multi().unlink(...names).zrem(index, ...names).exec();
    purged += names.length;
  }
  return purged;
}
