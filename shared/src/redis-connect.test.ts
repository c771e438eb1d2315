import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from '../../bench/src/harness/processes.js';
import { TEST_REDIS_URL } from '../../test-support/databases.js';
import { redisCli, startRedisCluster, type RedisClusterHandle } from '../../test-support/redis-cluster.js';
import { connectRedis, connectSubscriber, duplicateRedis, isCluster } from './redis-connect.js';
import { waitForReplica } from './redis-replication.js';
import { parseAddresses, type RedisTarget } from './redis-target.js';
import { StartupError } from './startup.js';

/** Connections to a real six-node cluster: commands, a subscriber on one node, duplicates. */
let cluster: RedisClusterHandle;
let target: Extract<RedisTarget, { kind: 'cluster' }>;

beforeAll(async () => {
  cluster = await startRedisCluster();
  target = { kind: 'cluster', nodes: parseAddresses('seeds', cluster.seeds), tls: false };
}, 60_000);

afterAll(async () => cluster?.close());

it('hears a cluster PUBLISH on a subscriber that started past a dead seed node', async () => {
  const dead = { host: '127.0.0.1', port: await freePort() };
  const commands = await connectRedis(target);
  const sub = await connectSubscriber({ ...target, nodes: [dead, ...target.nodes] });
  try {
    expect(isCluster(commands)).toBe(true);
    expect(isCluster(sub)).toBe(false);
    expect(sub.options.port).not.toBe(dead.port);
    const heard = new Promise<string>((resolve) => sub.once('message', (_channel: string, message: string) => resolve(message)));
    await sub.subscribe('redis-connect-test');
    // Published through whichever node the cluster client picks; every node delivers it.
    await commands.publish('redis-connect-test', 'hello');
    expect(await heard).toBe('hello');
  } finally {
    sub.disconnect();
    commands.disconnect();
  }
});

it('duplicates a cluster client with changed options, still a cluster client', async () => {
  const commands = await connectRedis(target);
  const copy = duplicateRedis(commands, { lazyConnect: false, maxRetriesPerRequest: 1, enableOfflineQueue: false });
  try {
    expect(isCluster(copy)).toBe(true);
    await new Promise((resolve) => copy.once('ready', resolve));
    await copy.set('redis-connect-test:{x}', '1');
    expect(await commands.get('redis-connect-test:{x}')).toBe('1');
  } finally {
    copy.disconnect();
    commands.disconnect();
  }
});

it('refuses to start with a message naming the cluster when no seed answers', async () => {
  const nodes = [{ host: '127.0.0.1', port: await freePort() }];
  await expect(connectSubscriber({ kind: 'cluster', nodes, tls: false })).rejects.toThrow(StartupError);
  await expect(connectRedis({ kind: 'cluster', nodes, tls: false })).rejects.toThrow(new RegExp(`unreachable at cluster 127.0.0.1:${nodes[0]!.port}`));
});

it('waits for a replica on the node that took a write, and not at all on a lone server', async () => {
  const commands = await connectRedis(target);
  const lone = await connectRedis(TEST_REDIS_URL);
  try {
    const key = 'redis-connect-test:replicated';
    const master = await cluster.masterOf(key);
    const waits = async () => Number(/cmdstat_wait:calls=(\d+)/.exec(await redisCli(master, 'INFO', 'commandstats'))?.[1] ?? 0);
    const before = await waits();
    await commands.del(key);
    // A generous bound: WAIT returns as soon as the replica acknowledges, however busy the machine.
    expect(await waitForReplica(commands, key, 10_000)).toBe(1);
    expect(await waits()).toBe(before + 1);
    expect(await waitForReplica(lone, key)).toBe(0);
  } finally {
    lone.disconnect();
    commands.disconnect();
  }
});
