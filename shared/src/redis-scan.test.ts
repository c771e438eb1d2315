import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisCluster, type RedisClusterHandle } from '../../test-support/redis-cluster.js';
import { connectRedis, type RedisClient } from './redis-connect.js';
import { deleteKeys, runPerSlot, scanKeys } from './redis-scan.js';
import { parseAddresses } from './redis-target.js';
import { TEST_REDIS_URL, testRedisPrefix } from '../../test-support/databases.js';

/** The same whole-keyspace helpers on a real six-node cluster and on the standalone server. */
let cluster: RedisClusterHandle;
const clients: { name: string; client: RedisClient }[] = [];

beforeAll(async () => {
  cluster = await startRedisCluster();
  clients.push({ name: 'cluster', client: await connectRedis({ kind: 'cluster', nodes: parseAddresses('seeds', cluster.seeds), tls: false }) });
  clients.push({ name: 'standalone', client: await connectRedis(TEST_REDIS_URL) });
}, 60_000);

afterAll(async () => {
  for (const { client } of clients) client.disconnect();
  await cluster?.close();
});

async function collect(client: RedisClient, pattern: string): Promise<string[]> {
  const found: string[] = [];
  for await (const batch of scanKeys(client, pattern, 10)) found.push(...batch);
  return found.sort();
}

describe.each(['cluster', 'standalone'])('redis-scan on %s Redis', (name) => {
  it('writes per slot, finds every key on every master, and deletes them per slot', async () => {
    const { client } = clients.find((c) => c.name === name)!;
    const prefix = testRedisPrefix(`scan-${name}`);
    const keys = Array.from({ length: 200 }, (_, i) => `${prefix}k:${i}`);
    // Tagged keys too: several writes that must land in one slot's transaction.
    const tagged = [`${prefix}{t}:a`, `${prefix}{t}:b`];
    await runPerSlot(client, [...keys.map((k): [string, string, string] => ['set', k, 'v']), ['set', tagged[0]!, '1'], ['pexpire', tagged[0]!, 60_000], ['set', tagged[1]!, '2']]);
    if (name === 'cluster') {
      // Spread over every master, so a scan of one node alone would miss most of them.
      const owners = new Set(await Promise.all(keys.slice(0, 30).map((k) => cluster.masterOf(k))));
      expect(owners.size).toBe(3);
    }
    expect(await collect(client, `${prefix}*`)).toEqual([...keys, ...tagged].sort());
    expect(Number(await client.pttl(tagged[0]!))).toBeGreaterThan(0);
    expect(await deleteKeys(client, [...keys, ...tagged, `${prefix}missing`])).toBe(keys.length + tagged.length);
    expect(await collect(client, `${prefix}*`)).toEqual([]);
    expect(await deleteKeys(client, [])).toBe(0);
  });
});
