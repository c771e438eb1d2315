import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness as startControlPlane, type Harness as ControlPlaneHarness } from '../../control-plane/test/harness.js';
import { TEST_REDIS_URL } from '../../test-support/databases.js';
import { eventually } from '../../test-support/processes.js';
import { sendJson, startWireMock, type RunningWireMock, type WireRequest } from '../../test-support/wire-mock.js';
import { startProxy, type Proxy } from '../src/proxy.js';

/**
 * Cached answers and policy changes: an entry is named by the versions of the policy parts that
 * decide an answer (guardrails, max_tokens cap, model allow-list), so a change leaves every older
 * entry unreachable at once, an answer still in flight when the change came included. Real control
 * plane and Redis, a real proxy, an OpenAI-format upstream that can hold an answer back.
 */
let upstream: RunningWireMock;
let cp: ControlPlaneHarness;
let proxy: Proxy;
let url: string;
/** Answers the upstream holds until the test lets them go, by the question they answer. */
const held = new Map<string, () => void>();

function answer(req: WireRequest, res: ServerResponse): void {
  const messages = req.body.messages as { content: string }[];
  const text = messages[messages.length - 1]!.content;
  const send = () =>
    sendJson(res, 200, {
      id: 'chatcmpl-x',
      object: 'chat.completion',
      created: 1,
      model: req.body.model,
      choices: [{ index: 0, message: { role: 'assistant', content: `answer to ${text}` }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
    });
  if (text.startsWith('hold')) held.set(text, send);
  else send();
}

beforeAll(async () => {
  upstream = await startWireMock(answer);
  cp = await startControlPlane('cache-versions');
  const dir = mkdtempSync(join(tmpdir(), 'gw-cache-versions-'));
  const providers = join(dir, 'providers.yaml');
  writeFileSync(providers, `providers:\n  - { name: upstream, type: openai, base_url: ${upstream.baseUrl}, models: [gpt-4o-mini, gpt-4o] }\n`);
  proxy = await startProxy({ REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: cp.prefix, PROXY_PORT: '0', METRICS_PORT: '0', PROXY_HOST: '127.0.0.1', GATEWAY_CONFIG: providers, LOG_LEVEL: 'silent' });
  url = `http://127.0.0.1:${proxy.port}`;
}, 60_000);

afterAll(async () => {
  for (const release of held.values()) release();
  await proxy?.drain();
  await cp?.close();
  await upstream?.close();
});

let projects = 0;
async function project(): Promise<{ id: string; key: string }> {
  const created = await cp.api('POST', '/v1/projects', { token: cp.adminToken, body: { name: `versions ${++projects}`, cache: { mode: 'exact', ttl_seconds: 600 } } });
  expect(created.status).toBe(201);
  const key = await cp.api('POST', `/v1/projects/${created.body.id}/keys`, { token: cp.adminToken, body: { name: 'k' } });
  return { id: created.body.id, key: key.body.key };
}

async function ask(key: string, content: string, extra: Record<string, unknown> = {}): Promise<{ status: number; cache: string | null; body: any }> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], ...extra }),
  });
  return { status: res.status, cache: res.headers.get('x-gateway-cache'), body: await res.json() };
}

async function guard(projectId: string, pattern: string): Promise<void> {
  const put = await cp.api('PUT', `/v1/projects/${projectId}/guardrails`, {
    token: cp.adminToken,
    body: [{ id: 'words', stage: 'output', type: 'regex', action: 'block', patterns: [pattern] }],
  });
  expect(put.status).toBe(200);
}

/** Waits until the proxy holds the project's new guardrails: a fresh question (no-store) is blocked by them. */
async function guardSeen(key: string, content: string): Promise<void> {
  await eventually(async () => {
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'cache-control': 'no-store' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `${content} ${Math.random()}` }] }),
    });
    const body = (await res.json()) as { choices?: { finish_reason: string }[] };
    return body.choices?.[0]?.finish_reason === 'content_filter';
  }, 'the proxy applies the new guardrails');
}

describe('a cached answer after a policy change', () => {
  it('is not served once a guardrail that blocks it is added', async () => {
    const p = await project();
    expect((await ask(p.key, 'alpha')).cache).toBe('miss');
    const hit = await ask(p.key, 'alpha');
    expect(hit.cache).toBe('hit');
    expect(hit.body.choices[0].message.content).toBe('answer to alpha');

    await guard(p.id, 'alpha');
    await guardSeen(p.key, 'alpha probe');
    const after = await ask(p.key, 'alpha');
    expect(after.cache).toBe('miss');
    expect(after.body.choices[0].finish_reason).toBe('content_filter');
    expect(after.body.choices[0].message.content ?? '').not.toContain('alpha');
  });

  it('is not served past a max_tokens_cap lowered since it was stored', async () => {
    const p = await project();
    expect((await ask(p.key, 'beta', { max_tokens: 100 })).cache).toBe('miss');
    expect((await ask(p.key, 'beta', { max_tokens: 100 })).cache).toBe('hit');

    expect((await cp.api('PATCH', `/v1/projects/${p.id}`, { token: cp.adminToken, body: { max_tokens_cap: 10 } })).status).toBe(200);
    // The proxy holds the cap once a fresh question over it is refused.
    await eventually(async () => (await ask(p.key, `beta probe ${Math.random()}`, { max_tokens: 100 })).status === 400, 'the proxy applies the lowered cap');
    const after = await ask(p.key, 'beta', { max_tokens: 100 });
    expect(after.status).toBe(400);
    expect(after.body.error.param).toBe('max_tokens');
    expect(after.cache).not.toBe('hit');
  });

  it('is not served when it was still in flight as the guardrails changed', async () => {
    const p = await project();
    const question = `hold gamma ${p.id}`;
    const inFlight = ask(p.key, question);
    await eventually(() => held.has(question), 'the upstream holds the answer');

    await guard(p.id, 'gamma');
    await guardSeen(p.key, 'gamma probe');
    // Admitted under the old guardrails: answered under them, and stored.
    held.get(question)!();
    held.delete(question);
    const first = await inFlight;
    expect(first.cache).toBe('miss');
    expect(first.body.choices[0].message.content).toBe(`answer to ${question}`);

    const calls = upstream.requests();
    const again = ask(p.key, question);
    // A miss under the new version: it goes to the upstream again and is guarded.
    await eventually(() => held.has(question), 'the upstream holds the answer');
    held.get(question)!();
    held.delete(question);
    const after = await again;
    expect(after.cache).toBe('miss');
    expect(after.body.choices[0].finish_reason).toBe('content_filter');
    expect(upstream.requests()).toBe(calls + 1);
  });

  it('is still served when nothing that decides an answer changed', async () => {
    const p = await project();
    expect((await ask(p.key, 'delta')).cache).toBe('miss');
    // A rate limit is not part of an answer: the entry stays.
    expect((await cp.api('PATCH', `/v1/projects/${p.id}`, { token: cp.adminToken, body: { rate_limits: { key_rpm: 1000 } } })).status).toBe(200);
    expect((await ask(p.key, 'delta')).cache).toBe('hit');
  });
});
