import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness as startControlPlane, type Harness as ControlPlaneHarness } from '../../control-plane/test/harness.js';
import { eventually, spawnMockUpstream, spawnNode, type Child, type MockUpstreamProcess } from '../../test-support/processes.js';
import { freePort, startPrivateRedis, type PrivateRedis } from '../../test-support/services.js';

/**
 * Two proxy processes and a control plane on one private Redis: a DELETE through the management
 * API cuts streams in flight on every replica, and a Redis restart leaves none serving a key that
 * was deleted meanwhile.
 */
let redis: PrivateRedis;
let upstream: MockUpstreamProcess;
let cp: ControlPlaneHarness;
const proxies: { child: Child; url: string }[] = [];
let projectId: string;

beforeAll(async () => {
  redis = await startPrivateRedis();
  upstream = await spawnMockUpstream();
  cp = await startControlPlane('replicas', { env: { REDIS_URL: redis.url } });
  const dir = mkdtempSync(join(tmpdir(), 'gw-replicas-'));
  const providers = join(dir, 'providers.yaml');
  writeFileSync(providers, `providers:\n  - name: upstream\n    type: openai\n    base_url: ${upstream.baseUrl}\n    models: [gpt-4o-mini]\n`);
  for (let i = 0; i < 2; i++) {
    const port = await freePort();
    const child = spawnNode('proxy/dist/main.js', [], {
      PROXY_PORT: String(port),
      METRICS_PORT: '0',
      PROXY_HOST: '127.0.0.1',
      REDIS_URL: redis.url,
      REDIS_PREFIX: cp.prefix,
      GATEWAY_CONFIG: providers,
      KEY_STALE_BOUND_MS: '0',
      LOG_LEVEL: 'warn',
    });
    const url = `http://127.0.0.1:${port}`;
    proxies.push({ child, url });
    await eventually(async () => (await fetch(`${url}/readyz`)).status === 200, `proxy ${i} ready`, 20_000);
  }
  const project = await cp.api('POST', '/v1/projects', { token: cp.adminToken, body: { name: 'replicas', quota_tokens: null } });
  expect(project.status).toBe(201);
  projectId = project.body.id;
});

afterAll(async () => {
  await Promise.all(proxies.map((p) => p.child.kill('SIGTERM')));
  await cp?.close();
  await upstream?.stop();
  await redis?.stop();
});

async function createKey(): Promise<{ id: string; key: string }> {
  const res = await cp.api('POST', `/v1/projects/${projectId}/keys`, { token: cp.adminToken, body: { name: 'k' } });
  expect(res.status).toBe(201);
  return { id: res.body.id, key: res.body.key };
}

async function deleteKey(id: string): Promise<number> {
  return (await cp.api('DELETE', `/v1/projects/${projectId}/keys/${id}`, { token: cp.adminToken })).status;
}

function chat(url: string, key: string, body: Record<string, unknown> = {}): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], ...body }),
  });
}

async function readToEnd(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text;
    text += decoder.decode(value);
  }
}

describe('revocation across replicas', () => {
  it('cuts a stream in flight on every replica after a DELETE, aborts upstream, and refuses the key', async () => {
    const key = await createKey();
    const abortedBefore = (await upstream.stats()).aborted;
    const streams = await Promise.all(proxies.map((p) => chat(p.url, key.key, { stream: true, mock: { chunks: 500, gap_ms: 20 } })));
    const readers = streams.map((res) => {
      expect(res.status).toBe(200);
      return res.body!.getReader();
    });
    // Both streams are flowing before the key is deleted.
    for (const reader of readers) expect((await reader.read()).done).toBe(false);
    expect(await deleteKey(key.id)).toBe(204);

    for (const reader of readers) {
      const text = await readToEnd(reader);
      expect(text).toContain('"code":"UNAUTHORIZED"');
      expect(text).not.toContain('[DONE]');
    }
    await eventually(async () => (await upstream.stats()).aborted >= abortedBefore + 2, 'both upstream requests aborted');
    for (const p of proxies) expect((await chat(p.url, key.key)).status).toBe(401);
  });

  it('cuts the streams of every key of a deleted project', async () => {
    const other = await cp.api('POST', '/v1/projects', { token: cp.adminToken, body: { name: 'doomed project', quota_tokens: null } });
    const keys = await Promise.all([0, 1].map(async () => (await cp.api('POST', `/v1/projects/${other.body.id}/keys`, { token: cp.adminToken, body: { name: 'k' } })).body.key as string));
    const readers = await Promise.all(
      proxies.map(async (p, i) => {
        const res = await chat(p.url, keys[i]!, { stream: true, mock: { chunks: 500, gap_ms: 20 } });
        const reader = res.body!.getReader();
        await reader.read();
        return reader;
      }),
    );
    expect((await cp.api('DELETE', `/v1/projects/${other.body.id}`, { token: cp.adminToken })).status).toBe(204);
    for (const reader of readers) {
      const text = await readToEnd(reader);
      expect(text).toContain('"code":"UNAUTHORIZED"');
      expect(text).not.toContain('[DONE]');
    }
    for (const [i, p] of proxies.entries()) expect((await chat(p.url, keys[i]!)).status).toBe(401);
  });

  it('serves no deleted key after a Redis restart, and serves live keys again', async () => {
    const live = await createKey();
    const doomed = await createKey();
    for (const p of proxies) {
      expect((await chat(p.url, live.key)).status).toBe(200);
      expect((await chat(p.url, doomed.key)).status).toBe(200);
    }

    await redis.stop('SIGKILL');
    // While Redis is away the replicas cannot hear deletions: they refuse rather than guess.
    for (const p of proxies) {
      await eventually(async () => (await chat(p.url, doomed.key)).status === 503, 'unverifiable key refused with 503');
    }
    // The key is deleted in Postgres while Redis is down (the request completes once it is back).
    // Redis starts again only once the deletion has committed: one committed after the restart is
    // a deletion made after the outage, and the key may be served until it is made.
    const deletion = deleteKey(doomed.id);
    await eventually(async () => (await cp.sql`select 1 from api_keys where id = ${doomed.id} and deleted_at is not null`).length === 1, 'the deletion committed');
    await redis.start();

    const seen: number[] = [];
    await eventually(
      async () => {
        const results = await Promise.all(proxies.flatMap((p) => [chat(p.url, doomed.key), chat(p.url, live.key)]));
        const statuses = results.map((r) => r.status);
        seen.push(statuses[0]!, statuses[2]!);
        return statuses[1] === 200 && statuses[3] === 200;
      },
      'live key served again on both replicas',
      30_000,
    );
    // The live key can be served from a replica's own cache a moment before the projection is
    // whole again; until it is, the deleted key is refused as unverifiable (503), never served.
    for (const p of proxies) {
      await eventually(
        async () => {
          const status = (await chat(p.url, doomed.key)).status;
          seen.push(status);
          return status === 401;
        },
        'deleted key refused with 401',
      );
    }
    expect(seen).not.toContain(200);
    expect([204, 503]).toContain(await deletion);
  });
});
