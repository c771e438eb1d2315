import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, parseAddresses, RedisKeys, type RedisClient } from '@gateway/shared';
import type { Cluster } from 'ioredis';
import { startHarness as startControlPlane, type Harness as ControlPlaneHarness } from '../../control-plane/test/harness.js';
import { spawnMockUpstream, type MockUpstreamProcess } from '../../test-support/processes.js';
import { startRedisCluster, type RedisClusterHandle } from '../../test-support/redis-cluster.js';
import { startProxy, type Proxy } from '../src/proxy.js';

/**
 * The response cache's key layout on a real six-node Redis Cluster: a project's entries and their
 * index sit in the project's slot (its hash tag), so the proxy's MULTI that stores an entry and
 * the control plane's purge run on one node, and hits are served from the cluster (the proxy keeps
 * no copy in memory here: CACHE_LOCAL_BYTES=0).
 */
let cluster: RedisClusterHandle;
let client: RedisClient;
let upstream: MockUpstreamProcess;
let cp: ControlPlaneHarness;
let proxy: Proxy;
let keys: RedisKeys;

beforeAll(async () => {
  cluster = await startRedisCluster();
  const env = { REDIS_CLUSTER_NODES: cluster.seeds };
  client = await connectRedis({ kind: 'cluster', nodes: parseAddresses('REDIS_CLUSTER_NODES', cluster.seeds), tls: false });
  client.on('error', () => {});
  upstream = await spawnMockUpstream();
  cp = await startControlPlane('response-cache-cluster', { env });
  keys = new RedisKeys(cp.prefix);
  const dir = mkdtempSync(join(tmpdir(), 'gw-cache-cluster-'));
  const providers = join(dir, 'providers.yaml');
  writeFileSync(providers, `providers:\n  - name: upstream\n    type: openai\n    base_url: ${upstream.baseUrl}\n    models: [gpt-4o-mini]\n`);
  proxy = await startProxy({ ...env, REDIS_PREFIX: cp.prefix, PROXY_PORT: '0', METRICS_PORT: '0', PROXY_HOST: '127.0.0.1', GATEWAY_CONFIG: providers, LOG_LEVEL: 'silent', CACHE_LOCAL_BYTES: '0' });
}, 180_000);

afterAll(async () => {
  await proxy?.drain();
  await cp?.close();
  client?.disconnect();
  await upstream?.stop();
  await cluster?.close();
}, 60_000);

describe('the response cache on a Redis Cluster', () => {
  it("stores entries in the project's slot, serves hits from them and purges them", async () => {
    const project = await cp.api('POST', '/v1/projects', { token: cp.adminToken, body: { name: 'cluster', cache: { mode: 'exact', ttl_seconds: 600 } } });
    const id = project.body.id as string;
    const key = (await cp.api('POST', `/v1/projects/${id}/keys`, { token: cp.adminToken, body: { name: 'k' } })).body.key as string;
    const ask = (content: string, endpoint = '/v1/chat/completions') =>
      fetch(`http://127.0.0.1:${proxy.port}${endpoint}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }),
      });
    const answers: string[] = [];
    for (const content of ['one', 'one', 'two', 'two']) {
      const r = await ask(content);
      expect(r.status).toBe(200);
      answers.push(r.headers.get('x-gateway-cache') as string);
      await r.text();
    }
    expect(answers).toEqual(['miss', 'hit', 'miss', 'hit']);
    expect((await upstream.stats()).requests).toBe(2);

    const names = await client.zrange(keys.cacheIndex(id), 0, -1);
    expect(names).toHaveLength(2);
    const slot = (name: string) => (client as Cluster).cluster('KEYSLOT', name) as Promise<number>;
    const policySlot = await slot(keys.projectPolicy(id));
    for (const name of [...names, keys.cacheIndex(id)]) expect(await slot(name)).toBe(policySlot);
    expect(await cluster.masterOf(names[0]!)).toBe(await cluster.masterOf(keys.projectPolicy(id)));

    const purged = await cp.api('DELETE', `/v1/projects/${id}/cache`, { token: cp.adminToken });
    expect(purged.body).toEqual({ purged: 2 });
    expect(await client.exists(...names)).toBe(0);
    const after = await ask('one');
    expect(after.headers.get('x-gateway-cache')).toBe('miss');
    await after.text();
  });
});
