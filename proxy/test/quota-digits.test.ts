import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness as startControlPlane, type Harness as ControlPlaneHarness } from '../../control-plane/test/harness.js';
import { TEST_REDIS_URL } from '../../test-support/databases.js';
import { spawnMockUpstream, type MockUpstreamProcess } from '../../test-support/processes.js';
import { startProxy, type Proxy } from '../src/proxy.js';

/**
 * The prompt estimate on text full of numbers: a run of up to three digits is one token in o200k
 * and cl100k, so prompts of words like `w123` reserve about what they use and a quota is spent
 * almost to its end. Weighing every digit alone, the same run was refused at 22,459 of 25,000.
 */
let upstream: MockUpstreamProcess;
let cp: ControlPlaneHarness;
let proxy: Proxy;

beforeAll(async () => {
  upstream = await spawnMockUpstream();
  cp = await startControlPlane('quota-digits');
  const dir = mkdtempSync(join(tmpdir(), 'gw-quota-digits-'));
  const providers = join(dir, 'providers.yaml');
  writeFileSync(providers, `providers:\n  - name: upstream\n    type: openai\n    base_url: ${upstream.baseUrl}\n    models: [gpt-4o-mini]\n`);
  proxy = await startProxy({
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: cp.prefix,
    PROXY_PORT: '0',
    METRICS_PORT: '0',
    PROXY_HOST: '127.0.0.1',
    GATEWAY_CONFIG: providers,
    LOG_LEVEL: 'silent',
  });
});

afterAll(async () => {
  await proxy?.drain();
  await cp?.close();
  await upstream?.stop();
});

describe('quota with numbers in the prompt', () => {
  it('admits sequential 600-word prompts of `w123` words until past 22,500 of a 25,000-token quota', async () => {
    const project = await cp.api('POST', '/v1/projects', { token: cp.adminToken, body: { name: 'digits', quota_tokens: 25_000 } });
    const key = (await cp.api('POST', `/v1/projects/${project.body.id}/keys`, { token: cp.adminToken, body: { name: 'k' } })).body.key as string;
    let used = 0;
    for (let i = 0; ; i++) {
      const content = Array.from({ length: 600 }, (_, w) => `w${100 + ((i * 600 + w) * 37) % 900}`).join(' ');
      const res = await fetch(`http://127.0.0.1:${proxy.port}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], max_tokens: 64 }),
      });
      if (res.status !== 200) {
        expect(res.status).toBe(429);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe('QUOTA_EXCEEDED');
        break;
      }
      used += ((await res.json()) as { usage: { total_tokens: number } }).usage.total_tokens;
      expect(used).toBeLessThanOrEqual(25_000);
    }
    expect(used).toBeGreaterThan(22_500);
  });
});
