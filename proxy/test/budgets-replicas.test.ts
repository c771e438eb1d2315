import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { decodeRecordBatch, RedisKeys, type AuditEvent } from '@gateway/shared';
import { startHarness as startControlPlane, type Harness as ControlPlaneHarness } from '../../control-plane/test/harness.js';
import { TEST_REDIS_URL } from '../../test-support/databases.js';
import { eventually, spawnMockUpstream, spawnNode, type Child, type MockUpstreamProcess } from '../../test-support/processes.js';
import { freePort } from '../../test-support/services.js';

/**
 * Two proxy processes hammering one dollar budget at once: every request is served or refused
 * 429 BUDGET_EXCEEDED naming the budget, the spend the ledger settles is exactly what the served
 * requests cost, and it never passes the limit.
 */
let upstream: MockUpstreamProcess;
let cp: ControlPlaneHarness;
let keys: RedisKeys;
const proxies: { child: Child; url: string }[] = [];
// US dollars per million tokens: a token costs a tenth of a cent, so a few dozen requests spend the budget.
const PRICE = 1000;

beforeAll(async () => {
  upstream = await spawnMockUpstream();
  cp = await startControlPlane('budgetreplicas');
  keys = new RedisKeys(cp.prefix);
  const dir = mkdtempSync(join(tmpdir(), 'gw-budgets-'));
  const providers = join(dir, 'providers.yaml');
  writeFileSync(
    providers,
    [
      'providers:',
      '  - name: upstream',
      '    type: openai',
      `    base_url: ${upstream.baseUrl}`,
      '    models:',
      `      - { id: gpt-4o-mini, price: { input: ${PRICE}, output: ${PRICE} }, max_output_tokens: 64 }`,
      '      - gpt-4o',
      '',
    ].join('\n'),
  );
  for (let i = 0; i < 2; i++) {
    const port = await freePort();
    const child = spawnNode('proxy/dist/main.js', [], {
      PROXY_PORT: String(port),
      METRICS_PORT: '0',
      PROXY_HOST: '127.0.0.1',
      REDIS_URL: TEST_REDIS_URL,
      REDIS_PREFIX: cp.prefix,
      GATEWAY_CONFIG: providers,
      LOG_LEVEL: 'warn',
      // Small blocks, so both proxies lease from the one budget many times.
      BUDGET_LEASE_CENTS: '2',
    });
    const url = `http://127.0.0.1:${port}`;
    proxies.push({ child, url });
    await eventually(async () => (await fetch(`${url}/readyz`)).status === 200, `proxy ${i} ready`, 20_000);
  }
});

afterAll(async () => {
  await Promise.all(proxies.map((p) => p.child.kill('SIGTERM')));
  await cp?.close();
  await upstream?.stop();
});

let projects = 0;
async function projectWithBudget(budget: Record<string, unknown>): Promise<{ id: string; key: string; budgetId: string }> {
  const project = await cp.api('POST', '/v1/projects', { token: cp.adminToken, body: { name: `budgets ${++projects}` } });
  const key = await cp.api('POST', `/v1/projects/${project.body.id}/keys`, { token: cp.adminToken, body: { name: 'k' } });
  const made = await cp.api('POST', `/v1/projects/${project.body.id}/budgets`, { token: cp.adminToken, body: budget });
  expect(made.status, made.text).toBe(201);
  return { id: project.body.id, key: key.body.key, budgetId: made.body.id };
}

function chat(url: string, key: string, body: Record<string, unknown> = {}): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'tell me something' }], max_tokens: 16, ...body }),
  });
}

/** The audit events of a project the proxies pushed into the records queue (no writer runs here). */
async function audits(projectId: string): Promise<AuditEvent[]> {
  const queue = new Queue(keys.recordsQueue, { connection: cp.redis.duplicate({ maxRetriesPerRequest: null }), prefix: keys.bullPrefix });
  try {
    const out: AuditEvent[] = [];
    for (const job of await queue.getJobs(['waiting', 'delayed', 'active', 'completed', 'prioritized'])) {
      out.push(...decodeRecordBatch(job.data).audit.filter((a) => a.project_id === projectId));
    }
    return out;
  } finally {
    await queue.close();
  }
}

describe('a budget shared by two proxy processes', () => {
  it('serves or refuses every request and never spends past the limit', async () => {
    const limit = 0.5;
    const { id, key, budgetId } = await projectWithBudget({ scope: 'project', limit_usd: limit, period: 'day' });
    const served: number[] = [];
    let refused = 0;
    // 2 × 60 requests, 12 at a time per proxy.
    await Promise.all(
      proxies.map(async ({ url }) => {
        for (let round = 0; round < 5; round++) {
          await Promise.all(
            Array.from({ length: 12 }, async () => {
              const res = await chat(url, key);
              const body = (await res.json()) as { usage?: { prompt_tokens: number; completion_tokens: number }; error?: { code: string; message: string } };
              if (res.status === 200) {
                served.push(((body.usage!.prompt_tokens + body.usage!.completion_tokens) * PRICE) / 1e6);
              } else {
                expect(res.status, JSON.stringify(body)).toBe(429);
                expect(body.error?.code).toBe('BUDGET_EXCEEDED');
                expect(body.error?.message).toContain(budgetId);
                refused++;
              }
            }),
          );
        }
      }),
    );
    expect(served.length).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
    const cost = served.reduce((a, b) => a + b, 0);
    expect(cost).toBeLessThanOrEqual(limit);
    // The proxies write settled costs within moments; the ledger then holds exactly what was served.
    const budget = await eventually(async () => {
      const res = await cp.api('GET', `/v1/projects/${id}/budgets/${budgetId}`, { token: cp.adminToken });
      return Math.abs(res.body.spent_usd - cost) < 1e-6 ? res.body : null;
    }, 'the ledger holds what was served');
    expect(budget.spent_usd).toBeLessThanOrEqual(limit);
    const window = Object.keys(await cp.redis.keys(`${keys.budgetLedger(id, budgetId, '')}*`));
    expect(window.length).toBe(1);
    // Every refusal is audited, as a policy refusal with its code.
    const refusals = await eventually(async () => {
      const found = (await audits(id)).filter((a) => a.error_code === 'BUDGET_EXCEEDED');
      return found.length === refused ? found : null;
    }, 'every refusal audited');
    for (const event of refusals) expect(event).toMatchObject({ outcome: 'policy_blocked', status: 429 });
  }, 120_000);

  it('charges requests that come one at a time, each after the proxy handed its idle lease back', async () => {
    const limit = 0.1;
    const { id, key, budgetId } = await projectWithBudget({ scope: 'project', limit_usd: limit, period: 'day' });
    const served: number[] = [];
    let refusal: { code: string; message: string } | undefined;
    for (let i = 0; i < 20 && refusal === undefined; i++) {
      const res = await chat(proxies[0]!.url, key);
      const body = (await res.json()) as { usage?: { prompt_tokens: number; completion_tokens: number }; error?: { code: string; message: string } };
      if (res.status !== 200) {
        expect(res.status, JSON.stringify(body)).toBe(429);
        refusal = body.error;
        break;
      }
      served.push(((body.usage!.prompt_tokens + body.usage!.completion_tokens) * PRICE) / 1e6);
      // A quiet spell, the traffic this case is about: the proxy writes the cost, hands its lease
      // back and, a flush later, forgets the ledger before the next request comes. What is
      // checked below holds however long the spell; the spell only decides which path it takes.
      const [ledger] = await cp.redis.keys(`${keys.budgetLedger(id, budgetId, '')}*`);
      await eventually(async () => !Object.keys(await cp.redis.hgetall(ledger!)).some((f) => f.startsWith('lease:')), 'the idle lease handed back', 10_000);
      await sleep(400);
    }
    expect(refusal).toMatchObject({ code: 'BUDGET_EXCEEDED' });
    expect(refusal?.message).toContain(budgetId);
    expect(served.length).toBeGreaterThan(2);
    const cost = served.reduce((a, b) => a + b, 0);
    expect(cost).toBeLessThanOrEqual(limit);
    const budget = await eventually(async () => {
      const res = await cp.api('GET', `/v1/projects/${id}/budgets/${budgetId}`, { token: cp.adminToken });
      return Math.abs(res.body.spent_usd - cost) < 1e-6 ? res.body : null;
    }, 'every spaced request charged');
    expect(budget.spent_usd).toBeLessThanOrEqual(limit);
  }, 120_000);

  it('refuses an unpriced model to a project with a budget, and serves it to one without', async () => {
    const { key } = await projectWithBudget({ scope: 'project', limit_usd: 10, period: 'total' });
    const res = await chat(proxies[0]!.url, key, { model: 'gpt-4o' });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('MODEL_NOT_PRICED');
    const plain = await cp.api('POST', '/v1/projects', { token: cp.adminToken, body: { name: 'no budget' } });
    const plainKey = await cp.api('POST', `/v1/projects/${plain.body.id}/keys`, { token: cp.adminToken, body: { name: 'k' } });
    expect((await chat(proxies[1]!.url, plainKey.body.key, { model: 'gpt-4o' })).status).toBe(200);
  });

  it("a key's budget counts that key's requests only", async () => {
    const project = await cp.api('POST', '/v1/projects', { token: cp.adminToken, body: { name: 'key budgets' } });
    const limited = (await cp.api('POST', `/v1/projects/${project.body.id}/keys`, { token: cp.adminToken, body: { name: 'limited' } })).body;
    const free = (await cp.api('POST', `/v1/projects/${project.body.id}/keys`, { token: cp.adminToken, body: { name: 'free' } })).body;
    const made = await cp.api('POST', `/v1/projects/${project.body.id}/budgets`, { token: cp.adminToken, body: { scope: 'key', key_id: limited.id, limit_usd: 0.001, period: 'day' } });
    expect(made.status, made.text).toBe(201);
    for (const { url } of proxies) {
      await eventually(async () => (await chat(url, limited.key)).status === 429, 'the key budget refuses', 5_000);
      expect((await chat(url, free.key)).status).toBe(200);
    }
  });

  it("a tag's budget counts requests carrying the tag, from the header or the key's defaults", async () => {
    const project = await cp.api('POST', '/v1/projects', { token: cp.adminToken, body: { name: 'tag budgets' } });
    const plain = (await cp.api('POST', `/v1/projects/${project.body.id}/keys`, { token: cp.adminToken, body: { name: 'plain' } })).body;
    const search = (await cp.api('POST', `/v1/projects/${project.body.id}/keys`, { token: cp.adminToken, body: { name: 'search', tags: { team: 'search' } } })).body;
    // Too small for any request's worst case: a request the budget counts is refused at once.
    const made = await cp.api('POST', `/v1/projects/${project.body.id}/budgets`, { token: cp.adminToken, body: { scope: 'tag', tag: 'team=search', limit_usd: 0.001, period: 'month' } });
    expect(made.status, made.text).toBe(201);
    const tagged = (url: string, key: string, tags: string) =>
      fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key, 'x-gateway-tags': tags },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 }),
      });
    for (const { url } of proxies) {
      await eventually(async () => (await tagged(url, plain.key, 'team=search')).status === 429, 'the tag budget refuses a tagged request', 5_000);
      const refused = await tagged(url, plain.key, 'team=search,feature=rag');
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: 'BUDGET_EXCEEDED' });
      // Another team's request and an untagged one are not counted by it.
      expect((await tagged(url, plain.key, 'team=ads')).status).toBe(200);
      expect((await chat(url, plain.key)).status).toBe(200);
      // The key's default tag applies when the request names none, and a request tag wins over it.
      expect((await chat(url, search.key)).status).toBe(429);
      expect((await tagged(url, search.key, 'team=ads')).status).toBe(200);
    }
  });

  it('a new budget takes effect on every proxy, and a deleted one stops counting', async () => {
    const project = await cp.api('POST', '/v1/projects', { token: cp.adminToken, body: { name: 'later budget' } });
    const key = (await cp.api('POST', `/v1/projects/${project.body.id}/keys`, { token: cp.adminToken, body: { name: 'k' } })).body.key;
    for (const { url } of proxies) expect((await chat(url, key)).status).toBe(200);
    // Too small for any request's worst case.
    const made = await cp.api('POST', `/v1/projects/${project.body.id}/budgets`, { token: cp.adminToken, body: { scope: 'project', limit_usd: 0.001, period: 'total' } });
    for (const { url } of proxies) await eventually(async () => (await chat(url, key)).status === 429, 'the budget refuses', 5_000);
    await cp.api('DELETE', `/v1/projects/${project.body.id}/budgets/${made.body.id}`, { token: cp.adminToken });
    for (const { url } of proxies) await eventually(async () => (await chat(url, key)).status === 200, 'served again', 5_000);
  });
});
