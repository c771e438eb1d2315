import { isCluster, type RedisClient } from './redis-connect.js';

/**
 * Waits until a replica holds every write this client has made so far on the node of `key`, for
 * writes that must survive a failover: a deleted API key, a sign-out. Redis replicates
 * asynchronously, so a master that dies just after answering can hand its slots to a replica that
 * never saw the write, and a deleted key would be found again. Bounded by `timeoutMs` (a master
 * with no replica left costs that much per call); nothing to wait for on a lone server
 * (REDIS_URL), whose restart loses everything anyway and is followed by a rebuild. Returns how
 * many replicas acknowledged.
 */
export async function waitForReplica(client: RedisClient, key: string, timeoutMs = 500): Promise<number> {
  if (!isCluster(client) && (client.options.sentinels?.length ?? 0) === 0) return 0;
  // The keyed command routes the pipeline, WAIT included, to the node that took the write.
  const replies = await client.pipeline().exists(key).wait(1, timeoutMs).exec();
  const [err, acknowledged] = replies?.[1] ?? [new Error('no reply'), 0];
  if (err) throw err;
  return Number(acknowledged);
}
