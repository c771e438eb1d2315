/**
 * A real six-node Redis Cluster for tests, on the helper the benchmark's cluster scenario uses
 * (bench/src/harness/redis-cluster.ts): three masters with a replica each, on private ports.
 */
export { redisCli, startRedisCluster, type ClusterNode, type RedisClusterHandle } from '../bench/src/harness/redis-cluster.js';
