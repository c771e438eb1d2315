import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness as startControlPlane, type Harness as ControlPlaneHarness } from '../../control-plane/test/harness.js';
import { TEST_REDIS_URL } from '../../test-support/databases.js';
import { eventually, spawnMockUpstream, type MockUpstreamProcess } from '../../test-support/processes.js';
import { estimatePromptTokens } from '../src/policy/token-estimate.js';
import { startProxy, type Proxy } from '../src/proxy.js';

/**
 * The worst case a request reserves, end to end (docs/budgets.md): a budget one nano-dollar short
 * of docs' worst case refuses the request with 429 BUDGET_EXCEEDED, and the same budget raised to
 * exactly the worst case serves it. Leases grant only from what is left of the limit, so the
 * boundary is the amount reserved, through parse, the caps, the estimate and the ledger script.
 */
let upstream: MockUpstreamProcess;
let cp: ControlPlaneHarness;
let proxy: Proxy;

const PRICE = { input: 0.15, output: 0.6 };
const MESSAGES = [{ role: 'user', content: 'Summarise the quarterly figures for the search team, in three bullet points.' }];

beforeAll(async () => {
  upstream = await spawnMockUpstream();
  cp = await startControlPlane('budgetworst');
  const dir = mkdtempSync(join(tmpdir(), 'gw-budget-worst-'));
  const providers = join(dir, 'providers.yaml');
  writeFileSync(
    providers,
    [
      'providers:',
      '  - name: upstream',
      '    type: openai',
      `    base_url: ${upstream.baseUrl}`,
      '    models:',
      `      - { id: gpt-4o-mini, price: { input: ${PRICE.input}, output: ${PRICE.output} } }`,
      `      - { id: gpt-4o-small, price: { input: ${PRICE.input}, output: ${PRICE.output} }, max_output_tokens: 4096 }`,
      '',
    ].join('\n'),
  );
  proxy = await startProxy({ REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: cp.prefix, PROXY_PORT: '0', METRICS_PORT: '0', PROXY_HOST: '127.0.0.1', GATEWAY_CONFIG: providers, LOG_LEVEL: 'silent' });
}, 60_000);

afterAll(async () => {
  await proxy?.drain();
  await cp?.close();
  await upstream?.stop();
});

/** docs/budgets.md: estimated prompt tokens × input price + maximum output × output price, in nano-dollars. */
function worstCaseNanos(body: Record<string, unknown>, maxOutput: number): number {
  const prompt = estimatePromptTokens(body as never);
  return (prompt * PRICE.input + maxOutput * PRICE.output) * 1000;
}

let projects = 0;
async function chat(key: string, body: Record<string, unknown>): Promise<{ status: number; code: string | null }> {
  const res = await fetch(`http://127.0.0.1:${proxy.port}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify(body),
  });
  const answer = (await res.json()) as { error?: { code: string } };
  return { status: res.status, code: answer.error?.code ?? null };
}

/** Refused one nano-dollar short of `nanos`, served at it. */
async function boundaryIs(body: Record<string, unknown>, nanos: number): Promise<void> {
  const project = await cp.api('POST', '/v1/projects', { token: cp.adminToken, body: { name: `worst case ${++projects}` } });
  expect(project.status).toBe(201);
  const key = (await cp.api('POST', `/v1/projects/${project.body.id}/keys`, { token: cp.adminToken, body: { name: 'k' } })).body.key as string;
  // Half a nano-dollar either side: the ledger's limit is the whole nano-dollars of limit_usd.
  const short = Math.ceil(nanos) - 1 + 0.5;
  const made = await cp.api('POST', `/v1/projects/${project.body.id}/budgets`, { token: cp.adminToken, body: { scope: 'project', limit_usd: short / 1e9, period: 'total' } });
  expect(made.status, made.text).toBe(201);
  // Served until the proxies know the budget, refused from then on.
  await eventually(async () => (await chat(key, body)).code === 'BUDGET_EXCEEDED', `refused one nano-dollar short of ${nanos}`);
  const exact = Math.ceil(nanos) + 0.5;
  expect((await cp.api('PATCH', `/v1/projects/${project.body.id}/budgets/${made.body.id}`, { token: cp.adminToken, body: { limit_usd: exact / 1e9 } })).status).toBe(200);
  const served = await eventually(async () => {
    const res = await chat(key, body);
    return res.status === 200 ? res : null;
  }, `served at ${nanos}`);
  expect(served.code).toBeNull();
}

describe('the worst case a request reserves (docs/budgets.md)', () => {
  it('(a) max_tokens: prompt × input price + max_tokens × output price', async () => {
    const body = { model: 'gpt-4o-mini', messages: MESSAGES, max_tokens: 500 };
    await boundaryIs(body, worstCaseNanos(body, 500));
  });

  it('(b) max_tokens and max_completion_tokens: the larger counts', async () => {
    const body = { model: 'gpt-4o-mini', messages: MESSAGES, max_tokens: 300, max_completion_tokens: 900 };
    await boundaryIs(body, worstCaseNanos(body, 900));
  });

  it('(c) n = 3: three times the output', async () => {
    const body = { model: 'gpt-4o-mini', messages: MESSAGES, max_tokens: 200, n: 3 };
    await boundaryIs(body, worstCaseNanos(body, 600));
  });

  it("(d) no limit: the model's max_output_tokens, 16,384 when the providers file gives none", async () => {
    const body = { model: 'gpt-4o-mini', messages: MESSAGES };
    await boundaryIs(body, worstCaseNanos(body, 16_384));
    const small = { model: 'gpt-4o-small', messages: MESSAGES, n: 2 };
    await boundaryIs(small, worstCaseNanos(small, 4096 * 2));
  });
});
