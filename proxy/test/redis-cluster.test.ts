import { parseAddresses, RedisKeys } from '@gateway/shared';
import { startRedisCluster } from '../../test-support/redis-cluster.js';
import { replicatedRedisSuite } from './redis-failover.case.js';

/**
 * The gateway on a six-node Redis Cluster (REDIS_CLUSTER_NODES). Two masters are killed in turn:
 * first the one holding the record queue's slot, then the first seed node, which every proxy's
 * invalidation subscriber connects to first.
 */
replicatedRedisSuite(
  'redis-cluster',
  async () => {
    const cluster = await startRedisCluster();
    return {
      env: { REDIS_CLUSTER_NODES: cluster.seeds },
      target: { kind: 'cluster', nodes: parseAddresses('REDIS_CLUSTER_NODES', cluster.seeds), tls: false },
      async failOver(round) {
        const masters = await cluster.masters();
        const first = cluster.nodes[0]!.port;
        const victim = round === 0 ? await cluster.masterOf(`${new RedisKeys('any:').bullPrefix}:records:id`) : masters.includes(first) ? first : masters[0]!;
        await cluster.kill(victim);
        await cluster.waitForFailover(victim);
      },
      close: () => cluster.close(),
    };
  },
  { failovers: 2 },
);
