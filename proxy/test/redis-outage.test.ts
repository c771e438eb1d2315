import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness as startControlPlane, type Harness as ControlPlaneHarness } from '../../control-plane/test/harness.js';
import { startWriter, type Writer } from '../../control-plane/src/writer/start-writer.js';
import { eventually, spawnMockUpstream, spawnNode, type Child, type MockUpstreamProcess } from '../../test-support/processes.js';
import { freePort, startPrivateRedis, type PrivateRedis } from '../../test-support/services.js';

/**
 * Serving through a Redis outage. A control plane, two proxy processes (each following the
 * control plane's invalidation log as well as Redis) and a writer share a private Redis, which is
 * killed under steady load and restarted ten seconds later, empty. During the outage a key is
 * deleted through the management API. Every request with a live key is served throughout, the
 * deleted key is refused on both proxies before Redis returns and stays refused after, and every
 * request lands exactly one audit event (every 200 one usage record).
 */
const TOKEN = 'outage-test-internal-token-0123456789';
const OUTAGE_MS = 10_000;

let redis: PrivateRedis;
let upstream: MockUpstreamProcess;
let cp: ControlPlaneHarness;
let writer: Writer;
const proxies: { child: Child; url: string }[] = [];

beforeAll(async () => {
  redis = await startPrivateRedis();
  upstream = await spawnMockUpstream();
  cp = await startControlPlane('outage', { env: { REDIS_URL: redis.url, INTERNAL_TOKEN: TOKEN } });
  writer = await startWriter({ DATABASE_URL: cp.db.url, REDIS_URL: redis.url, REDIS_PREFIX: cp.prefix, LOG_LEVEL: 'silent', WRITER_PORT: '0' });
  const dir = mkdtempSync(join(tmpdir(), 'gw-outage-'));
  const providers = join(dir, 'providers.yaml');
  writeFileSync(providers, `providers:\n  - name: upstream\n    type: openai\n    base_url: ${upstream.baseUrl}\n    models: [gpt-4o-mini]\n`);
  for (let i = 0; i < 2; i++) {
    const port = await freePort();
    const child = spawnNode('proxy/dist/main.js', [], {
      PROXY_PORT: String(port),
      METRICS_PORT: '0',
      PROXY_HOST: '127.0.0.1',
      PROXY_WORKERS: '1',
      REDIS_URL: redis.url,
      REDIS_PREFIX: cp.prefix,
      GATEWAY_CONFIG: providers,
      CONTROL_PLANE_URL: cp.base,
      INTERNAL_TOKEN: TOKEN,
      LOG_LEVEL: 'warn',
    });
    const url = `http://127.0.0.1:${port}`;
    proxies.push({ child, url });
    await eventually(async () => (await fetch(`${url}/readyz`)).status === 200, `proxy ${i} ready`, 20_000);
  }
}, 120_000);

afterAll(async () => {
  await Promise.all(proxies.map((p) => p.child.kill('SIGTERM')));
  await writer?.close();
  await cp?.close();
  await upstream?.stop();
  await redis?.stop('SIGKILL');
});

function chat(url: string, key: string): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
}

interface Sent {
  key: string;
  proxy: number;
  startedAt: number;
  status: number;
  code: string | null;
  requestId: string;
}

describe('a Redis outage', () => {
  it('serves every live key, refuses a key deleted meanwhile on both proxies, and loses no record', { timeout: 180_000 }, async () => {
    const project = await cp.api('POST', '/v1/projects', { token: cp.adminToken, body: { name: 'outage', quota_tokens: null } });
    expect(project.status).toBe(201);
    const newKey = async () => {
      const res = await cp.api('POST', `/v1/projects/${project.body.id}/keys`, { token: cp.adminToken, body: { name: 'k' } });
      expect(res.status).toBe(201);
      return { id: res.body.id as string, key: res.body.key as string };
    };
    const live = [await newKey(), await newKey(), await newKey()];
    const doomed = await newKey();

    // Steady load: four loops, each cycling through the live keys (and the doomed one) on both proxies.
    const sent: Sent[] = [];
    let running = true;
    const loops = Array.from({ length: 4 }, async (_, loop) => {
      for (let n = loop; running; n++) {
        const proxy = n % 2;
        const keys = [...live.map((k) => k.key), doomed.key];
        const key = keys[Math.floor(n / 2) % keys.length]!;
        const startedAt = Date.now();
        const res = await chat(proxies[proxy]!.url, key);
        const body = (await res.json()) as { error?: { code: string } };
        sent.push({ key, proxy, startedAt, status: res.status, code: body.error?.code ?? null, requestId: res.headers.get('x-request-id')! });
      }
    });

    await eventually(() => sent.filter((s) => s.status === 200).length >= 200, 'load flowing before the outage', 30_000);
    const killedAt = Date.now();
    await redis.stop('SIGKILL');

    // Into the outage, past KEY_STALE_BOUND_MS: only the log stream tells the proxies about deletions now.
    await new Promise((r) => setTimeout(r, 2_000));
    const deleteSentAt = Date.now();
    const deletion = await cp.api('DELETE', `/v1/projects/${project.body.id}/keys/${doomed.id}`, { token: cp.adminToken });
    const deleteAnsweredAt = Date.now();
    expect(deletion.status).toBe(204);
    expect(redis.running).toBe(false);
    console.log(`DELETE during the outage answered in ${deleteAnsweredAt - deleteSentAt} ms`);

    // Both proxies refuse the deleted key while Redis is still down.
    for (const p of proxies) {
      await eventually(async () => (await chat(p.url, doomed.key)).status === 401, 'the deleted key refused', 5_000);
    }
    const refusedEverywhereAt = Date.now();
    expect(redis.running).toBe(false);
    console.log(`deleted key refused on both proxies ${refusedEverywhereAt - deleteAnsweredAt} ms after the DELETE was answered`);

    await new Promise((r) => setTimeout(r, Math.max(0, killedAt + OUTAGE_MS - Date.now())));
    // Back, empty (no persistence): the control plane rebuilds the projection.
    await redis.start();
    const backAt = Date.now();
    await eventually(async () => {
      const res = await fetch(`${cp.base}/readyz`);
      return res.status === 200;
    }, 'the control plane sees Redis again', 20_000);
    await eventually(() => sent.filter((s) => s.startedAt > backAt + 2_000 && s.status === 200).length >= 200, 'load flowing after Redis returned', 30_000);
    running = false;
    await Promise.all(loops);

    const liveKeys = new Set(live.map((k) => k.key));
    const liveRefused = sent.filter((s) => liveKeys.has(s.key) && s.status !== 200);
    const during = sent.filter((s) => s.startedAt >= killedAt && s.startedAt < backAt);
    console.log(
      `requests: ${sent.length} (${during.length} during the outage); live-key refusals: ${liveRefused.length}`,
      liveRefused.slice(0, 5).map((s) => `${s.status} ${s.code}`),
    );
    expect(during.filter((s) => liveKeys.has(s.key) && s.status === 200).length).toBeGreaterThan(100);
    expect(liveRefused).toEqual([]);
    // The deleted key: never served once both proxies had refused it, before or after Redis came back.
    const doomedAfter = sent.filter((s) => s.key === doomed.key && s.startedAt >= refusedEverywhereAt);
    expect(doomedAfter.length).toBeGreaterThan(0);
    expect(doomedAfter.filter((s) => s.status === 200)).toEqual([]);
    for (const p of proxies) expect((await chat(p.url, doomed.key)).status).toBe(401);

    // Every answered request has exactly one audit event, every 200 exactly one usage record.
    const ids = sent.map((s) => s.requestId);
    const okIds = sent.filter((s) => s.status === 200).map((s) => s.requestId);
    const counts = async () => {
      const [audit] = await cp.sql<{ n: number; distinct: number }[]>`
        select count(*)::int as n, count(distinct request_id)::int as distinct from audit_events where request_id = any(${ids})`;
      const [usage] = await cp.sql<{ n: number; distinct: number }[]>`
        select count(*)::int as n, count(distinct request_id)::int as distinct from usage_records where request_id = any(${okIds})`;
      return { audit: audit!, usage: usage! };
    };
    const landed = await eventually(async () => {
      const c = await counts();
      return c.audit.distinct === ids.length && c.usage.distinct === okIds.length ? c : null;
    }, 'every record written', 60_000);
    expect(landed.audit).toEqual({ n: ids.length, distinct: ids.length });
    expect(landed.usage).toEqual({ n: okIds.length, distinct: okIds.length });
    // A refusal of the deleted key is still attributed to it: the proxies heard of its deletion.
    const refusedIds = doomedAfter.map((s) => s.requestId);
    const attributed = await cp.sql<{ key_id: string | null; project_id: string | null; status: number }[]>`
      select key_id, project_id, status from audit_events where request_id = any(${refusedIds})`;
    expect(attributed.length).toBe(refusedIds.length);
    for (const row of attributed) expect(row).toEqual({ key_id: doomed.id, project_id: project.body.id, status: 401 });
  });
});
