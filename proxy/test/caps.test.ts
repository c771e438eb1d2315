import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness as startControlPlane, type Harness as ControlPlaneHarness } from '../../control-plane/test/harness.js';
import { TEST_REDIS_URL } from '../../test-support/databases.js';
import { eventually, spawnMockUpstream, type MockUpstreamProcess } from '../../test-support/processes.js';
import { startProxy, type Proxy } from '../src/proxy.js';

/**
 * Caps that hold whatever the body carries: both output limits sent, `n`, the project's max_n.
 */
let upstream: MockUpstreamProcess;
let cp: ControlPlaneHarness;
let proxy: Proxy;

beforeAll(async () => {
  upstream = await spawnMockUpstream();
  cp = await startControlPlane('caps');
  const dir = mkdtempSync(join(tmpdir(), 'gw-caps-'));
  const providers = join(dir, 'providers.yaml');
  writeFileSync(providers, `providers:\n  - name: upstream\n    type: openai\n    base_url: ${upstream.baseUrl}\n    models: [gpt-4o-mini]\n`);
  proxy = await startProxy({ REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: cp.prefix, PROXY_PORT: '0', METRICS_PORT: '0', PROXY_HOST: '127.0.0.1', GATEWAY_CONFIG: providers, LOG_LEVEL: 'silent' });
});

afterAll(async () => {
  await proxy?.drain();
  await cp?.close();
  await upstream?.stop();
});

let projects = 0;
async function project(body: Record<string, unknown>): Promise<{ id: string; key: string }> {
  const created = await cp.api('POST', '/v1/projects', { token: cp.adminToken, body: { name: `caps ${++projects}`, ...body } });
  expect(created.status, created.text).toBe(201);
  const key = await cp.api('POST', `/v1/projects/${created.body.id}/keys`, { token: cp.adminToken, body: { name: 'k' } });
  return { id: created.body.id, key: key.body.key };
}

async function chat(key: string, body: Record<string, unknown>): Promise<{ status: number; body: { error?: { code: string; param: string | null; message: string } } }> {
  const res = await fetch(`http://127.0.0.1:${proxy.port}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }], ...body }),
  });
  return { status: res.status, body: (await res.json()) as never };
}

describe('caps', () => {
  it('checks the larger of max_tokens and max_completion_tokens, and sends one field within the cap', async () => {
    const { key } = await project({ max_tokens_cap: 100 });
    const over = await chat(key, { max_tokens: 500, max_completion_tokens: 10 });
    expect(over.status).toBe(400);
    expect(over.body.error?.param).toBe('max_tokens');
    expect((await chat(key, { max_tokens: 10, max_completion_tokens: 500 })).status).toBe(400);
    const ok = await chat(key, { max_tokens: 80, max_completion_tokens: 30 });
    expect(ok.status).toBe(200);
    const sent = (await upstream.stats()).lastBody;
    expect(sent.max_tokens).toBeUndefined();
    expect(sent.max_completion_tokens).toBe(30);
  });

  it('multiplies the cap check by n, and gives a request without a limit cap / n', async () => {
    const { key } = await project({ max_tokens_cap: 100 });
    const over = await chat(key, { max_tokens: 40, n: 3 });
    expect(over.status).toBe(400);
    expect(over.body.error?.param).toBe('n');
    expect((await chat(key, { max_tokens: 30, n: 3 })).status).toBe(200);
    expect((await chat(key, { n: 4 })).status).toBe(200);
    expect((await upstream.stats()).lastBody.max_tokens).toBe(25);
  });

  it('limits n to the project setting (default 8)', async () => {
    const { id, key } = await project({});
    expect((await chat(key, { n: 8 })).status).toBe(200);
    const refused = await chat(key, { n: 9 });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'INVALID_REQUEST', param: 'n' });
    expect((await chat(key, { n: 0 })).status).toBe(400);
    const patched = await cp.api('PATCH', `/v1/projects/${id}`, { token: cp.adminToken, body: { max_n: 2 } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.max_n).toBe(2);
    await eventually(async () => (await chat(key, { n: 3 })).status === 400, 'max_n 2 applies');
    expect((await chat(key, { n: 2 })).status).toBe(200);
    expect((await cp.api('PATCH', `/v1/projects/${id}`, { token: cp.adminToken, body: { max_n: 0 } })).body.error.param).toBe('max_n');
  });
});
