import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisKeys } from '@gateway/shared';
import { TEST_REDIS_URL, testRedisPrefix } from '../../test-support/databases.js';
import { eventually, spawnMockUpstream, spawnNode, waitForOutput, type Child, type MockUpstreamProcess } from '../../test-support/processes.js';
import { clearPrefix, deleteTestKey, projectTestKey, testRedis } from '../../test-support/redis.js';

/**
 * PROXY_WORKERS=2: two data planes on worker threads share one port. A deletion must reach both:
 * streams in flight on every worker are cut, and the key is refused afterwards by each.
 */
let upstream: MockUpstreamProcess;
let proxy: Child;
let redis: Redis;
let url: string;
let metricsUrl: string;
const prefix = testRedisPrefix('workers');
const keys = new RedisKeys(prefix);
// One connection per request, so that the kernel spreads them over both workers' sockets.
const fresh = new Agent({ pipelining: 0, connections: 64 });

beforeAll(async () => {
  redis = testRedis();
  upstream = await spawnMockUpstream();
  const dir = mkdtempSync(join(tmpdir(), 'gw-workers-'));
  const providers = join(dir, 'providers.yaml');
  writeFileSync(providers, `providers:\n  - name: upstream\n    type: openai\n    base_url: ${upstream.baseUrl}\n    models: [gpt-4o-mini]\n`);
  proxy = spawnNode('proxy/dist/main.js', [], {
    PROXY_WORKERS: '2',
    PROXY_PORT: '0',
    METRICS_PORT: '0',
    PROXY_HOST: '127.0.0.1',
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: prefix,
    GATEWAY_CONFIG: providers,
    LOG_LEVEL: 'info',
  });
  const [, port, metricsPort, workers] = await waitForOutput(proxy, /"port":(\d+),"metricsPort":(\d+),"workers":(\d+)[^\n]*"msg":"proxy listening"/, 30_000);
  expect(workers).toBe('2');
  url = `http://127.0.0.1:${port}`;
  metricsUrl = `http://127.0.0.1:${metricsPort}`;
});

afterAll(async () => {
  await proxy?.kill('SIGTERM');
  await fresh.close();
  await upstream?.stop();
  await clearPrefix(redis, prefix);
  await redis.quit();
});

function chat(key: string, body: Record<string, unknown> = {}): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], ...body }),
    dispatcher: fresh,
  } as unknown as RequestInit);
}

function inFlightByWorker(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^gateway_requests_in_flight\{worker="(\d+)"\} (\d+)/gm)) out[m[1]!] = Number(m[2]);
  return out;
}

describe('PROXY_WORKERS', () => {
  it('serves on every worker and reports merged metrics with a worker label', async () => {
    const key = await projectTestKey(redis, keys);
    for (let i = 0; i < 10; i++) expect((await chat(key.key)).status).toBe(200);
    const metrics = await (await fetch(`${metricsUrl}/metrics`)).text();
    expect(metrics).toMatch(/gateway_requests_total\{status="200",model="gpt-4o-mini",provider="upstream",endpoint="chat.completions",worker="\d"\} \d+/);
    expect((await fetch(`${metricsUrl}/readyz`)).status).toBe(200);
  });

  it('cuts streams in flight on both workers when their key is deleted', async () => {
    const key = await projectTestKey(redis, keys);
    const abortedBefore = (await upstream.stats()).aborted;
    const streams = await Promise.all(Array.from({ length: 16 }, () => chat(key.key, { stream: true, mock: { chunks: 400, gap_ms: 25 } })));
    for (const res of streams) expect(res.status).toBe(200);
    const readers = streams.map((res) => res.body!.getReader());
    await Promise.all(readers.map((r) => r.read()));
    // Both workers hold some of the streams (16 connections, two sockets sharing the port).
    const spread = inFlightByWorker(await (await fetch(`${metricsUrl}/metrics`)).text());
    expect(Object.keys(spread).sort()).toEqual(['0', '1']);
    expect(spread['0']).toBeGreaterThan(0);
    expect(spread['1']).toBeGreaterThan(0);

    await deleteTestKey(redis, keys, key);
    const decoder = new TextDecoder();
    const texts = await Promise.all(
      readers.map(async (reader) => {
        let text = '';
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return text;
          text += decoder.decode(value);
        }
      }),
    );
    for (const text of texts) {
      expect(text).toContain('"code":"UNAUTHORIZED"');
      expect(text).not.toContain('[DONE]');
    }
    await eventually(async () => (await upstream.stats()).aborted >= abortedBefore + 16, 'every upstream request aborted');
    for (let i = 0; i < 8; i++) expect((await chat(key.key)).status).toBe(401);
  });

  it('drains every worker on SIGTERM and exits 0', async () => {
    expect(await proxy.kill('SIGTERM')).toBe(0);
  });
});
