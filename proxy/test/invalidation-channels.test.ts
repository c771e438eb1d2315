import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness as startControlPlane, type Harness as ControlPlaneHarness } from '../../control-plane/test/harness.js';
import { eventually, spawnMockUpstream, type MockUpstreamProcess } from '../../test-support/processes.js';
import { startPrivateRedis, type PrivateRedis } from '../../test-support/services.js';
import { startProxy, type Proxy } from '../src/proxy.js';

/**
 * The proxy's trust in its cached keys with two invalidation channels: served while either the
 * Redis subscription or the log stream is live, refused (503, still attributed to the key) once
 * both have been lost for KEY_STALE_BOUND_MS.
 */
const TOKEN = 'channels-test-internal-token-0123456789';
let redis: PrivateRedis;
let upstream: MockUpstreamProcess;
let cp: ControlPlaneHarness;
let proxy: Proxy;

beforeAll(async () => {
  redis = await startPrivateRedis();
  upstream = await spawnMockUpstream();
  cp = await startControlPlane('channels', { env: { REDIS_URL: redis.url, INTERNAL_TOKEN: TOKEN } });
  const dir = mkdtempSync(join(tmpdir(), 'gw-channels-'));
  const providers = join(dir, 'providers.yaml');
  writeFileSync(providers, `providers:\n  - name: upstream\n    type: openai\n    base_url: ${upstream.baseUrl}\n    models: [gpt-4o-mini]\n`);
  proxy = await startProxy({
    REDIS_URL: redis.url,
    REDIS_PREFIX: cp.prefix,
    PROXY_PORT: '0',
    METRICS_PORT: '0',
    PROXY_HOST: '127.0.0.1',
    GATEWAY_CONFIG: providers,
    CONTROL_PLANE_URL: cp.base,
    INTERNAL_TOKEN: TOKEN,
    KEY_STALE_BOUND_MS: '300',
    LOG_LEVEL: 'silent',
    DRAIN_TIMEOUT_MS: '1000',
  });
}, 60_000);

afterAll(async () => {
  await proxy?.drain();
  await cp?.close().catch(() => {});
  await upstream?.stop();
  await redis?.stop('SIGKILL');
});

function chat(key: string): Promise<Response> {
  return fetch(`http://127.0.0.1:${proxy.port}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
}

describe('two invalidation channels', () => {
  it('serves cached keys while the log stream is live, and refuses them once both channels are lost', { timeout: 60_000 }, async () => {
    const project = await cp.api('POST', '/v1/projects', { token: cp.adminToken, body: { name: 'channels' } });
    const created = await cp.api('POST', `/v1/projects/${project.body.id}/keys`, { token: cp.adminToken, body: { name: 'k' } });
    const key = created.body.key as string;
    expect((await chat(key)).status).toBe(200);

    await redis.stop('SIGKILL');
    await eventually(() => !proxy.deps.subscriber.subscribed, 'the Redis subscription lost');
    // Well past KEY_STALE_BOUND_MS: the log stream alone keeps the key trusted.
    await new Promise((r) => setTimeout(r, 1_000));
    for (let i = 0; i < 5; i++) expect((await chat(key)).status).toBe(200);
    expect(proxy.ready()).toBe(true);

    // The control plane goes too: nothing can tell this proxy about deletions any more.
    await cp.cp.close();
    let refusal: Response | undefined;
    await eventually(async () => {
      const res = await chat(key);
      if (res.status === 200) return false;
      refusal = res;
      return true;
    }, 'the key refused once both channels are lost', 15_000);
    expect(refusal!.status).toBe(503);
    expect(((await refusal!.json()) as { error: { code: string } }).error.code).toBe('UNAVAILABLE');
    expect(proxy.ready()).toBe(false);
  });
});
