import { createServer, type Server } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { Queue } from 'bullmq';
import { RedisKeys, type AuditEvent, type UsageRecord } from '@gateway/shared';
import OpenAI from 'openai';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness as startControlPlane, type Harness as ControlPlaneHarness } from '../../control-plane/test/harness.js';
import { TEST_REDIS_URL } from '../../test-support/databases.js';
import { eventually } from '../../test-support/processes.js';
import { startProxy, type Proxy } from '../src/proxy.js';
import { bodyOf, listen, queuedRecords, scriptedOpenAiProvider } from './guardrail-providers.js';

/**
 * Guardrails end to end: the management API stores them, the proxy applies them to prompts and
 * answers (whole and streamed) of the official clients. The provider is a local mock speaking
 * OpenAI's wire format that records what it was sent and answers a scripted text in chunks.
 */
let cp: ControlPlaneHarness;
let proxy: Proxy;
let upstream: Server;
let hook: Server;
const seen: { messages: { content: string }[] }[] = [];
let answerChunks: string[] = ['Hello ', 'there'];
let hookAnswer: unknown = { action: 'allow' };
const hookCalls: { ok: boolean; body: { stage: string; texts: string[] } }[] = [];
let hookSecret = '';
let proxyEnv: Record<string, string> = {};

beforeAll(async () => {
  upstream = scriptedOpenAiProvider(seen, () => answerChunks);
  hook = createServer(async (req, res) => {
    const raw = await bodyOf(req);
    let ok = false;
    try {
      new Webhook(hookSecret).verify(raw, req.headers as Record<string, string>);
      ok = true;
    } catch {}
    hookCalls.push({ ok, body: JSON.parse(raw) });
    if (hookAnswer === 'hang') return;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(hookAnswer));
  });
  const upstreamPort = await listen(upstream);
  const hookPort = await listen(hook);
  cp = await startControlPlane('guardrails', { env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  const dir = mkdtempSync(join(tmpdir(), 'gw-guardrails-'));
  const providers = join(dir, 'providers.yaml');
  writeFileSync(providers, `providers:\n  - name: upstream\n    type: openai\n    base_url: http://127.0.0.1:${upstreamPort}/v1\n    models: [gpt-4o-mini]\n`);
  proxyEnv = { REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: cp.prefix, PROXY_PORT: '0', METRICS_PORT: '0', PROXY_HOST: '127.0.0.1', GATEWAY_CONFIG: providers, LOG_LEVEL: 'silent' };
  // The webhook guard service listens on 127.0.0.1: the proxy may call it only with the rule lifted.
  proxy = await startProxy({ ...proxyEnv, GUARDRAIL_WEBHOOK_ALLOW_PRIVATE: 'true' });
  hookUrl = `http://127.0.0.1:${hookPort}/guard`;
  const keys = new RedisKeys(cp.prefix);
  queue = new Queue(keys.recordsQueue, { connection: cp.redis.duplicate({ maxRetriesPerRequest: null }), prefix: keys.bullPrefix });
});

let queue: Queue;

function records(projectId: string): Promise<{ usage: UsageRecord[]; audit: AuditEvent[] }> {
  return queuedRecords(proxy, queue, projectId);
}

let hookUrl = '';

afterAll(async () => {
  await proxy?.drain();
  await queue?.close();
  await cp?.close();
  upstream?.close();
  hook?.close();
});

let projects = 0;
async function project(guardrails: unknown[]): Promise<{ id: string; key: string; put: { status: number; body: { data: { id: string; secret?: string }[] } } }> {
  const created = await cp.api('POST', '/v1/projects', { token: cp.adminToken, body: { name: `g ${++projects}` } });
  const key = await cp.api('POST', `/v1/projects/${created.body.id}/keys`, { token: cp.adminToken, body: { name: 'k' } });
  const put = await cp.api('PUT', `/v1/projects/${created.body.id}/guardrails`, { token: cp.adminToken, body: guardrails });
  return { id: created.body.id, key: key.body.key, put };
}

const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: `http://127.0.0.1:${proxy.port}/v1`, maxRetries: 0 });
const anthropic = (key: string) => new Anthropic({ apiKey: key, baseURL: `http://127.0.0.1:${proxy.port}`, maxRetries: 0 });
const secret = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789';

describe('guardrails', () => {
  it('takes effect on a proxy that already holds the project\'s policy', async () => {
    const p = await project([]);
    await openai(p.key).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `k ${secret}` }] });
    const put = await cp.api('PUT', `/v1/projects/${p.id}/guardrails`, { token: cp.adminToken, body: [{ id: 's', stage: 'input', action: 'block', type: 'pii', entities: ['secret'] }] });
    expect(put.status).toBe(200);
    await eventually(async () => {
      const err = await openai(p.key).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `k ${secret}` }] }).catch((e: unknown) => e);
      return (err as { code?: string }).code === 'GUARDRAIL_BLOCKED';
    }, 'the guardrail applied');
    const got = await cp.api('GET', `/v1/projects/${p.id}/guardrails`, { token: cp.adminToken });
    expect(got.body, JSON.stringify(got)).toBeDefined();
    expect(got.body.data, JSON.stringify(got.body)).toEqual([{ id: 's', stage: 'input', action: 'block', type: 'pii', entities: ['secret'] }]);
    const tried = await cp.api('POST', `/v1/projects/${p.id}/guardrails/test`, { token: cp.adminToken, body: { text: `x ${secret}` } });
    expect(tried.body).toMatchObject({ blocked_by: 's', text: null });
  });

  it('refuses an invalid list naming the guardrail, and RE2-only syntax', async () => {
    const p = await project([]);
    const bad = await cp.api('PUT', `/v1/projects/${p.id}/guardrails`, { token: cp.adminToken, body: [{ id: 'backref', stage: 'input', action: 'block', type: 'regex', patterns: ['(a)\\1'] }] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('backref');
  });

  it('applies the webhooks\' address rule to webhook guards', async () => {
    const strict = await startControlPlane('guardrailsstrict');
    try {
      const created = await strict.api('POST', '/v1/projects', { token: strict.adminToken, body: { name: 'strict' } });
      const refused = await strict.api('PUT', `/v1/projects/${created.body.id}/guardrails`, { token: strict.adminToken, body: [{ id: 'local-hook', stage: 'input', action: 'block', type: 'webhook', url: 'http://127.0.0.1:9/x' }] });
      expect(refused.status).toBe(400);
      expect(refused.body.error.param).toBe('local-hook');
    } finally {
      await strict.close();
    }
  });

  it('refuses, when it is called, a webhook guard whose host is or resolves to a loopback address', async () => {
    // This control plane saves local URLs (WEBHOOK_ALLOW_PRIVATE); a proxy without
    // GUARDRAIL_WEBHOOK_ALLOW_PRIVATE checks the address again at every call.
    const strict = await startProxy(proxyEnv);
    try {
      const client = (key: string) => new OpenAI({ apiKey: key, baseURL: `http://127.0.0.1:${strict.port}/v1`, maxRetries: 0 });
      const calls = hookCalls.length;
      let provided = seen.length;
      hookAnswer = { action: 'allow' };
      for (const url of [hookUrl, hookUrl.replace('127.0.0.1', 'localhost')]) {
        const closed = await project([{ id: 'local-hook', stage: 'input', action: 'block', type: 'webhook', url, timeout_ms: 2000, failure_mode: 'closed' }]);
        expect(closed.put.status, url).toBe(200);
        const down = await client(closed.key).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }).catch((e: unknown) => e);
        expect(down, url).toBeInstanceOf(OpenAI.APIError);
        expect([(down as InstanceType<typeof OpenAI.APIError>).status, (down as InstanceType<typeof OpenAI.APIError>).code], url).toEqual([503, 'GUARDRAIL_UNAVAILABLE']);
        expect(seen.length, url).toBe(provided);
        const open = await project([{ id: 'local-hook', stage: 'input', action: 'block', type: 'webhook', url, timeout_ms: 2000, failure_mode: 'open' }]);
        const served = await client(open.key).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] });
        expect(served.choices[0]!.message.content, url).toBe('Hello there');
        expect(seen.length, url).toBe(++provided);
        const out = await queuedRecords(strict, queue, open.id);
        expect(out.audit.map((a) => [a.outcome, a.guardrails]), url).toEqual([['success', [{ id: 'local-hook', stage: 'input', action: 'flag', failed: true }]]]);
      }
      expect(hookCalls.length).toBe(calls);
    } finally {
      await strict.drain();
    }
  });

  it('blocks a prompt with a secret on chat completions and messages: 400 GUARDRAIL_BLOCKED, the provider never called', async () => {
    const p = await project([{ id: 'no-secrets', stage: 'input', action: 'block', type: 'pii', entities: ['secret'] }]);
    expect(p.put.status).toBe(200);
    const calls = seen.length;
    const err = await openai(p.key).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `my key is ${secret}` }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('GUARDRAIL_BLOCKED');
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('no-secrets');
    const aerr = await anthropic(p.key).messages.create({ model: 'gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: `key ${secret}` }] }).catch((e: unknown) => e);
    expect(aerr).toBeInstanceOf(Anthropic.BadRequestError);
    expect(JSON.stringify((aerr as InstanceType<typeof Anthropic.BadRequestError>).error)).toContain('no-secrets');
    expect(seen.length).toBe(calls);
    const blocked = await records(p.id);
    expect(blocked.usage).toEqual([]);
    expect(blocked.audit.map((a) => [a.outcome, a.status, a.error_code, a.guardrails])).toEqual([
      ['policy_blocked', 400, 'GUARDRAIL_BLOCKED', [{ id: 'no-secrets', stage: 'input', action: 'block' }]],
      ['policy_blocked', 400, 'GUARDRAIL_BLOCKED', [{ id: 'no-secrets', stage: 'input', action: 'block' }]],
    ]);
    // A clean prompt is served.
    const ok = await openai(p.key).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] });
    expect(ok.choices[0]!.message.content).toBe('Hello there');
  });

  it('masks with numbered placeholders, the same value the same number, on all three endpoints', async () => {
    const p = await project([{ id: 'pii', stage: 'input', action: 'mask', type: 'pii', entities: ['email'] }]);
    await openai(p.key).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'a@x.io and b@y.io' }, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'again b@y.io' }] });
    expect(seen.at(-1)!.messages.map((m) => m.content)).toEqual(['<EMAIL_1> and <EMAIL_2>', 'ok', 'again <EMAIL_2>']);
    await anthropic(p.key).messages.create({ model: 'gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'write to c@z.io' }] });
    expect(JSON.stringify(seen.at(-1)!.messages)).toContain('write to <EMAIL_1>');
    await openai(p.key).responses.create({ model: 'gpt-4o-mini', input: 'mail d@z.io' });
    expect(JSON.stringify(seen.at(-1)!.messages)).toContain('mail <EMAIL_1>');
  });

  it('withholds a blocked answer with finish_reason content_filter, whole and streamed', async () => {
    const p = await project([{ id: 'out', stage: 'output', action: 'block', type: 'regex', patterns: ['sk-proj-[A-Za-z0-9]{20,}'] }]);
    answerChunks = ["Here: ", secret.slice(0, 15), secret.slice(15), " done"];
    try {
    const whole = await openai(p.key).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    expect(whole.choices[0]!.finish_reason).toBe('content_filter');
    expect(whole.choices[0]!.message.content ?? '').not.toContain('sk-proj');
    // The secret split across two chunks: no part of it is ever released.
    const stream = await openai(p.key).chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(finish).toBe('content_filter');
    expect(text).not.toContain('sk-proj');
    expect(text).not.toContain(secret.slice(0, 6));
    const message = await anthropic(p.key).messages.create({ model: 'gpt-4o-mini', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
    expect(message.stop_reason).toBe('refusal');
    expect(JSON.stringify(message.content)).not.toContain('sk-proj');
    const mstream = anthropic(p.key).messages.stream({ model: 'gpt-4o-mini', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
    let mtext = '';
    for await (const event of mstream) if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') mtext += event.delta.text;
    expect(mtext).not.toContain('sk-proj');
    expect((await mstream.finalMessage()).stop_reason).toBe('refusal');
    const response = await openai(p.key).responses.create({ model: 'gpt-4o-mini', input: 'hi' });
    expect(response.status).toBe('incomplete');
    expect(response.incomplete_details?.reason).toBe('content_filter');
    expect(response.output_text).not.toContain('sk-proj');
    const rstream = await openai(p.key).responses.create({ model: 'gpt-4o-mini', input: 'hi', stream: true });
    let rtext = '';
    for await (const event of rstream) if (event.type === 'response.output_text.delta') rtext += event.delta;
    expect(rtext).not.toContain('sk-proj');
    const out = await records(p.id);
    // A withheld answer is a policy block in the audit, as a refused prompt is.
    expect(out.audit.every((a) => a.outcome === 'policy_blocked' && JSON.stringify(a.guardrails) === JSON.stringify([{ id: 'out', stage: 'output', action: 'block' }]))).toBe(true);
    expect(out.usage.every((u) => u.finish_reason === 'content_filter')).toBe(true);
    // A clean stream is delivered unchanged.
    answerChunks = ['Hello ', 'there', ', all ', 'clean'];
    const clean = await openai(p.key).chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    const parts: string[] = [];
    for await (const chunk of clean) if (chunk.choices[0]?.delta.content) parts.push(chunk.choices[0].delta.content);
    expect(parts).toEqual(answerChunks);
    } finally {
      answerChunks = ['Hello ', 'there'];
    }
  });

  it('calls a webhook guard signed as Standard Webhooks; closed → 503, open → served', async () => {
    const p = await project([{ id: 'hook', stage: 'input', action: 'block', type: 'webhook', url: hookUrl, timeout_ms: 300, failure_mode: 'closed' }]);
    expect(p.put.status).toBe(200);
    hookSecret = p.put.body.data[0]!.secret!;
    expect(hookSecret).toMatch(/^whsec_/);
    hookAnswer = { action: 'block', reason: 'not today' };
    const err = await openai(p.key).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello hook' }] }).catch((e: unknown) => e);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('GUARDRAIL_BLOCKED');
    expect(hookCalls.at(-1)).toMatchObject({ ok: true, body: { stage: 'input', texts: ['hello hook'] } });
    hookAnswer = { action: 'mask', texts: ['[redacted]'] };
    await openai(p.key).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello hook' }] });
    expect(seen.at(-1)!.messages[0]!.content).toBe('[redacted]');
    hookAnswer = 'hang';
    const down = await openai(p.key).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect((down as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect((down as InstanceType<typeof OpenAI.APIError>).code).toBe('GUARDRAIL_UNAVAILABLE');
    const open = await project([{ id: 'hook', stage: 'input', action: 'block', type: 'webhook', url: hookUrl, timeout_ms: 300, failure_mode: 'open' }]);
    const served = await openai(open.key).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] });
    expect(served.choices[0]!.message.content).toBe('Hello there');
    expect((await records(open.id)).audit.map((a) => [a.outcome, a.guardrails])).toEqual([['success', [{ id: 'hook', stage: 'input', action: 'flag', failed: true }]]]);
    hookAnswer = { action: 'allow' };
  });

  it('asks a webhook guard about the answer and delivers its replacement; counts decisions per guardrail', async () => {
    const p = await project([{ id: 'out-hook', stage: 'output', action: 'mask', type: 'webhook', url: hookUrl, timeout_ms: 2000, failure_mode: 'closed' }]);
    hookSecret = p.put.body.data[0]!.secret!;
    hookAnswer = { action: 'mask', texts: ['[checked]'] };
    const whole = await openai(p.key).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    expect(whole.choices[0]!.message.content).toBe('[checked]');
    expect(hookCalls.at(-1)).toMatchObject({ ok: true, body: { stage: 'output', texts: ['Hello there'] } });
    // A stream is held whole and the webhook asked once, at its end, not once per chunk.
    answerChunks = ['Hel', 'lo ', 'the', 're'];
    try {
      const calls = hookCalls.length;
      const stream = await openai(p.key).chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
      expect(text).toBe('[checked]');
      expect(hookCalls.slice(calls)).toMatchObject([{ ok: true, body: { stage: 'output', texts: ['Hello there'] } }]);
    } finally {
      answerChunks = ['Hello ', 'there'];
    }
    hookAnswer = { action: 'allow' };
    const metrics = await (await fetch(`http://127.0.0.1:${proxy.metricsPort}/metrics`)).text();
    expect(metrics).toMatch(/gateway_guardrail_decisions_total\{guardrail="out-hook",stage="output",action="mask"\} 2/);
    expect(metrics).toMatch(/gateway_guardrail_decisions_total\{guardrail="no-secrets",stage="input",action="block"\} [1-9]/);
  });

  it('masks an answer, whole and streamed, an email split across chunks included', async () => {
    const p = await project([{ id: 'out-pii', stage: 'output', action: 'mask', type: 'pii', entities: ['email'] }]);
    answerChunks = ['Write to ann', '@example.', 'com or ', 'bob@example.com', ' soon'];
    try {
      const whole = await openai(p.key).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
      expect(whole.choices[0]!.message.content).toBe('Write to <EMAIL_1> or <EMAIL_2> soon');
      const stream = await openai(p.key).chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] });
      let text = '';
      let finish: string | null = null;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        finish = chunk.choices[0]?.finish_reason ?? finish;
      }
      expect(text).toBe('Write to <EMAIL_1> or <EMAIL_2> soon');
      expect(finish).toBe('stop');
    } finally {
      answerChunks = ['Hello ', 'there'];
    }
  });

  it('blocks by moderation over a category threshold', async () => {
    const p = await project([{ id: 'mod', stage: 'input', action: 'block', type: 'moderation', provider: 'upstream', thresholds: { violence: 0.5 } }]);
    const err = await openai(p.key).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'plan an attack' }] }).catch((e: unknown) => e);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('GUARDRAIL_BLOCKED');
    const ok = await openai(p.key).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'plan a picnic' }] });
    expect(ok.choices[0]!.message.content).toBe('Hello there');
  });
});
