import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeRecordBatch, quotaPeriodId, RedisKeys, type AuditEvent, type UsageRecord } from '@gateway/shared';
import { startHarness as startControlPlane, type Harness as ControlPlaneHarness } from '../../control-plane/test/harness.js';
import { TEST_REDIS_URL } from '../../test-support/databases.js';
import { eventually, spawnMockUpstream, type MockUpstreamProcess } from '../../test-support/processes.js';
import { estimatePromptTokens } from '../src/policy/token-estimate.js';
import { startProxy, type Proxy } from '../src/proxy.js';

/**
 * Quotas, rate limits and model policies with two proxy replicas in front of one upstream,
 * configured through the management API.
 */
let upstream: MockUpstreamProcess;
let cp: ControlPlaneHarness;
let keys: RedisKeys;
const replicas: Proxy[] = [];
let queue: Queue;

beforeAll(async () => {
  upstream = await spawnMockUpstream();
  cp = await startControlPlane('policies', { env: { QUOTA_RECONCILE_MS: '3600000' } });
  keys = new RedisKeys(cp.prefix);
  const dir = mkdtempSync(join(tmpdir(), 'gw-policies-'));
  const providers = join(dir, 'providers.yaml');
  writeFileSync(providers, `providers:\n  - name: upstream\n    type: openai\n    base_url: ${upstream.baseUrl}\n    models: [gpt-4o-mini, gpt-4o]\n`);
  for (let i = 0; i < 2; i++) {
    replicas.push(
      await startProxy({
        REDIS_URL: TEST_REDIS_URL,
        REDIS_PREFIX: cp.prefix,
        PROXY_PORT: '0',
        METRICS_PORT: '0',
        PROXY_HOST: '127.0.0.1',
        GATEWAY_CONFIG: providers,
        LOG_LEVEL: 'silent',
        QUOTA_LEASE_TOKENS: '500',
      }),
    );
  }
  queue = new Queue(keys.recordsQueue, { connection: cp.redis.duplicate({ maxRetriesPerRequest: null }), prefix: keys.bullPrefix });
});

afterAll(async () => {
  for (const r of replicas) await r.drain();
  await queue?.close();
  await cp?.close();
  await upstream?.stop();
});

const url = (i: number) => `http://127.0.0.1:${replicas[i % replicas.length]!.port}`;

let projects = 0;
async function project(body: Record<string, unknown>): Promise<{ id: string; key: string; keyId: string }> {
  // Names are unique per account: each project of this file gets its own.
  const created = await cp.api('POST', '/v1/projects', { token: cp.adminToken, body: { name: `p ${++projects}`, ...body } });
  expect(created.status).toBe(201);
  const key = await cp.api('POST', `/v1/projects/${created.body.id}/keys`, { token: cp.adminToken, body: { name: 'k' } });
  return { id: created.body.id, key: key.body.key, keyId: key.body.id };
}

function chat(i: number, key: string, body: Record<string, unknown> = {}): Promise<Response> {
  return fetch(`${url(i)}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello there' }], ...body }),
  });
}

async function records(projectId: string): Promise<{ usage: UsageRecord[]; audit: AuditEvent[] }> {
  for (const r of replicas) await r.deps.records.flush(5_000);
  const usage: UsageRecord[] = [];
  const audit: AuditEvent[] = [];
  for (const job of await queue.getJobs(['waiting', 'delayed', 'active', 'completed', 'prioritized'])) {
    const batch = decodeRecordBatch(job.data);
    usage.push(...batch.usage.filter((u) => u.project_id === projectId));
    audit.push(...batch.audit.filter((a) => a.project_id === projectId));
  }
  return { usage, audit };
}

async function charged(projectId: string, period = 'total'): Promise<number> {
  return Number((await cp.redis.hget(keys.quotaLedger(projectId, period), 'charged')) ?? 0);
}

describe('quota', () => {
  it('200 concurrent requests on two replicas never overshoot a small quota', async () => {
    const quota = 2_000;
    const p = await project({ quota_tokens: quota });
    const responses = await Promise.all(Array.from({ length: 200 }, (_, i) => chat(i, p.key, { max_tokens: 30 })));
    let billed = 0;
    let refused = 0;
    for (const res of responses) {
      if (res.status === 200) billed += ((await res.json()) as { usage: { total_tokens: number } }).usage.total_tokens;
      else {
        expect(res.status).toBe(429);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe('QUOTA_EXCEEDED');
        refused++;
      }
    }
    expect(refused).toBeGreaterThan(0);
    // Every admitted request reserved its prompt estimate + max_tokens, more than it used, so the
    // documented bound on overshoot is zero here.
    expect(billed).toBeLessThanOrEqual(quota);
    await eventually(async () => (await charged(p.id)) === billed, 'settled counts reach the ledger');
    const { audit } = await records(p.id);
    expect(audit.filter((a) => a.outcome === 'policy_blocked' && a.error_code === 'QUOTA_EXCEEDED')).toHaveLength(refused);
    // used_tokens reads the same counter.
    expect((await cp.api('GET', `/v1/projects/${p.id}`, { token: cp.adminToken })).body.used_tokens).toBe(billed);
  });

  it('admits sequential requests through one proxy until the next reservation would pass the quota', async () => {
    // Settled requests used to keep their whole reservation out of the proxy's lease until the
    // next write to Redis, so a quick run of requests was refused at about a third of the quota.
    const quota = 25_000;
    const p = await project({ quota_tokens: quota });
    const body = { messages: [{ role: 'user', content: 'lorem ipsum '.repeat(200) }], max_tokens: 64 };
    const reservation = estimatePromptTokens({ model: 'gpt-4o-mini', ...body }) + 64;
    let used = 0;
    let admitted = 0;
    for (;;) {
      const res = await chat(0, p.key, body);
      if (res.status !== 200) {
        expect(res.status).toBe(429);
        const { error } = (await res.json()) as { error: { code: string; message: string } };
        expect(error.code).toBe('QUOTA_EXCEEDED');
        // Refused exactly when this request's reservation no longer fits.
        expect(used + reservation).toBeGreaterThan(quota);
        const n = (x: number) => x.toLocaleString('en-US');
        expect(error.message).toBe(`This request may need ${n(reservation)} tokens; the project has ${n(quota - used)} left of its ${n(quota)}-token quota. Lower max_tokens or raise the quota.`);
        break;
      }
      expect(used + reservation).toBeLessThanOrEqual(quota);
      used += ((await res.json()) as { usage: { total_tokens: number } }).usage.total_tokens;
      admitted++;
    }
    expect(admitted).toBeGreaterThan(25);
    await eventually(async () => (await charged(p.id)) === used, 'settled counts reach the ledger');
    expect((await chat(0, p.key, body)).status).toBe(429);
  });

  it('admits a short prompt on a small quota, and says so once the quota is used up', async () => {
    const p = await project({ quota_tokens: 40 });
    // Reserved by what is billed: a 4-word prompt and max_tokens 16 fit 40 tokens.
    const first = await chat(0, p.key, { messages: [{ role: 'user', content: 'Say hello to me' }], max_tokens: 16 });
    expect(first.status).toBe(200);
    await first.body?.cancel();
    // The mock upstream answers 26 tokens whatever max_tokens says: the second request ends the quota.
    const body = { messages: [{ role: 'user', content: 'hi' }], max_tokens: 1, mock: { content: 'word '.repeat(20) } };
    // Once the answers' true counts are settled (in batches, a moment after each answer) the quota
    // is used up, and the refusal says so rather than how much the request would need.
    let refusals = 0;
    await eventually(async () => {
      const res = await chat(0, p.key, body);
      if (res.status === 200) {
        await res.body?.cancel();
        return false;
      }
      expect(res.status).toBe(429);
      const { error } = (await res.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe('QUOTA_EXCEEDED');
      refusals++;
      return error.message === 'The project has used its token quota.';
    }, 'the quota used up');
    expect(refusals).toBeGreaterThan(0);
  });

  it('takes a raised quota into account at once', async () => {
    const p = await project({ quota_tokens: 10 });
    const refused = await chat(0, p.key, { max_tokens: 30 });
    expect(refused.status).toBe(429);
    expect((await cp.api('PATCH', `/v1/projects/${p.id}`, { token: cp.adminToken, body: { quota_tokens: 100_000 } })).status).toBe(200);
    await eventually(async () => (await chat(0, p.key, { max_tokens: 30 })).status === 200 && (await chat(1, p.key, { max_tokens: 30 })).status === 200, 'raised quota applies');
  });

  it('bills a stream cancelled half way for what was streamed', async () => {
    const p = await project({ quota_tokens: 1_000_000 });
    const res = await chat(0, p.key, { stream: true, mock: { chunks: 40, gap_ms: 25, content: 'word '.repeat(400) } });
    const reader = res.body!.getReader();
    for (let i = 0; i < 5; i++) await reader.read();
    await reader.cancel();
    const usage = await eventually(async () => (await records(p.id)).usage[0], 'usage record of the cancelled stream');
    expect(usage.finish_reason).toBe('cancelled');
    expect(usage.tokens.output).toBeGreaterThan(0);
    expect(usage.tokens.output).toBeLessThan(500);
    await eventually(async () => (await charged(p.id)) === usage.tokens.total, 'cancelled stream charged');
  });

  it('counts each calendar month on its own when asked to', async () => {
    const p = await project({ quota_tokens: 50_000, quota_period: 'month' });
    expect((await chat(0, p.key, { max_tokens: 30 })).status).toBe(200);
    const period = quotaPeriodId('month', Date.now());
    await eventually(async () => (await charged(p.id, period)) > 0, 'monthly ledger charged');
    expect(await charged(p.id, 'total')).toBe(0);
  });
});

describe('rate limits', () => {
  it('limits requests per minute across both replicas, with Retry-After, audited as policy_blocked', async () => {
    const p = await project({ rate_limits: { project_rpm: 5 } });
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 8; i++) {
      const res = await chat(i, p.key);
      statuses.push(res.status);
      if (res.status === 429) {
        retryAfter = res.headers.get('retry-after');
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe('RATE_LIMITED');
      }
    }
    // A minute boundary inside the loop may reset the window once; never more than 5 per window.
    expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(10);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect(Number(retryAfter)).toBeGreaterThan(0);
    const { audit } = await records(p.id);
    expect(audit.some((a) => a.outcome === 'policy_blocked' && a.error_code === 'RATE_LIMITED' && a.status === 429)).toBe(true);
  });

  it('limits tokens per minute per key', async () => {
    const p = await project({ rate_limits: { key_tpm: 100 } });
    expect((await chat(0, p.key, { max_tokens: 40 })).status).toBe(200);
    expect((await chat(1, p.key, { max_tokens: 40 })).status).toBe(429);
  });
});

describe('model policy', () => {
  it('refuses models off the allow-list and lists only allowed models', async () => {
    const p = await project({ allowed_models: ['gpt-4o-mini'] });
    expect((await chat(0, p.key)).status).toBe(200);
    const refused = await chat(1, p.key, { model: 'gpt-4o' });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('MODEL_NOT_ALLOWED');
    const models = (await (await fetch(`${url(0)}/v1/models`, { headers: { 'x-api-key': p.key } })).json()) as { data: { id: string }[] };
    expect(models.data.map((m) => m.id)).toEqual(['gpt-4o-mini']);
    const { audit } = await records(p.id);
    expect(audit.some((a) => a.outcome === 'policy_blocked' && a.error_code === 'MODEL_NOT_ALLOWED')).toBe(true);
  });

  it('caps max_tokens, injecting the cap when a request sets none', async () => {
    const p = await project({ max_tokens_cap: 50 });
    const over = await chat(0, p.key, { max_tokens: 100 });
    expect(over.status).toBe(400);
    expect(((await over.json()) as { error: { param: string } }).error.param).toBe('max_tokens');
    expect((await chat(0, p.key)).status).toBe(200);
    expect((await upstream.stats()).lastBody.max_tokens).toBe(50);
  });
});

describe('reconciliation', () => {
  it('restores a lost ledger from Postgres and corrects a stable drift once the queue is drained', async () => {
    const p = await project({ quota_tokens: 1_000_000 });
    let truth = 0;
    for (let i = 0; i < 4; i++) {
      const res = await chat(i, p.key, { max_tokens: 30 });
      expect(res.status).toBe(200);
      truth += ((await res.json()) as { usage: { total_tokens: number } }).usage.total_tokens;
    }
    await eventually(async () => (await charged(p.id)) === truth, 'every settlement in the ledger');
    // Land the records in Postgres so that it knows the truth too.
    const { startWriter } = await import('../../control-plane/src/writer/start-writer.js');
    const writer = await startWriter({ DATABASE_URL: cp.db.url, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: cp.prefix, WRITER_PORT: '0', LOG_LEVEL: 'silent' });
    try {
      await eventually(async () => {
        const [row] = await cp.sql<{ used: string }[]>`select used_tokens::text as used from projects where id = ${p.id}`;
        return Number(row?.used) === truth;
      }, 'writer settled the usage in Postgres', 20_000);
      await eventually(async () => Object.values(await queue.getJobCounts('waiting', 'active', 'delayed')).every((n) => n === 0), 'queue drained');

      await cp.redis.hincrby(keys.quotaLedger(p.id, 'total'), 'charged', 123);
      await cp.cp.reconciler.run();
      expect(await charged(p.id)).toBe(truth + 123);
      await cp.cp.reconciler.run();
      expect(await charged(p.id)).toBe(truth);

      await cp.redis.del(keys.quotaLedger(p.id, 'total'));
      await cp.cp.reconciler.run();
      expect(await charged(p.id)).toBe(truth);
    } finally {
      await writer.close();
    }
  });
});
