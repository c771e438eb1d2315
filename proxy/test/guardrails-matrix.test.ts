import { createServer, type Server, type ServerResponse } from 'node:http';
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
import { startProxy, type Proxy } from '../src/proxy.js';
import { bodyOf, listen, queuedRecords, scriptedOpenAiProvider } from './guardrail-providers.js';

/**
 * The guardrails matrix guardrails.test.ts leaves open: each type and action on the endpoints and
 * stages it does not reach there (/v1/responses input blocks, regex guards, flags, remote guards on
 * /v1/messages and /v1/responses, output masks of Anthropic- and Responses-shaped answers, a
 * blocked Responses stream's final status), and an output guard in front of a provider of type
 * anthropic, whose answers /v1/messages would otherwise pass through untouched. Two local mocks
 * stand in for the providers: one speaking OpenAI's wire format (it also answers /moderations),
 * one speaking Anthropic's Messages format; both record what they were sent and answer a scripted
 * text in chunks.
 */
let cp: ControlPlaneHarness;
let proxy: Proxy;
let upstream: Server;
let claude: Server;
let hook: Server;
let queue: Queue;
let hookUrl = '';
const DEFAULT_ANSWER = ['Hello ', 'there'];
/** What the OpenAI-wire mock was sent (moderation calls aside). */
const seen: { messages: { content: unknown }[]; stream?: boolean }[] = [];
/** What the Anthropic-wire mock was sent. */
const claudeSeen: { messages: unknown[]; stream?: boolean }[] = [];
let answerChunks: string[] = DEFAULT_ANSWER;
let hookSecret = '';
const hookCalls: { ok: boolean; body: { stage: string; texts: string[] } }[] = [];

/** Anthropic's Messages wire format (version 2023-06-01): the message object and its named SSE events. */
function anthropicWire(body: { model: string; stream?: boolean }, res: ServerResponse): void {
  const message = { id: 'msg_01matrix', type: 'message', role: 'assistant', model: body.model, content: [] as unknown[], stop_reason: 'end_turn' as string | null, stop_sequence: null, usage: { input_tokens: 7, output_tokens: 4 } };
  if (!body.stream) {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ ...message, content: [{ type: 'text', text: answerChunks.join('') }] }));
    return;
  }
  const frame = (data: Record<string, unknown>) => `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`;
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(frame({ type: 'message_start', message: { ...message, stop_reason: null, usage: { input_tokens: 7, output_tokens: 1 } } }));
  res.write(frame({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }));
  res.write(frame({ type: 'ping' }));
  for (const c of answerChunks) res.write(frame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: c } }));
  res.write(frame({ type: 'content_block_stop', index: 0 }));
  res.write(frame({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 4 } }));
  res.end(frame({ type: 'message_stop' }));
}

beforeAll(async () => {
  upstream = scriptedOpenAiProvider(seen, () => answerChunks);
  claude = createServer(async (req, res) => {
    const body = JSON.parse(await bodyOf(req));
    if (req.url !== '/v1/messages' || req.headers['anthropic-version'] === undefined || typeof body.max_tokens !== 'number') {
      res.statusCode = 400;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: `unexpected ${req.url}` } }));
      return;
    }
    claudeSeen.push(body);
    anthropicWire(body, res);
  });
  hook = createServer(async (req, res) => {
    const raw = await bodyOf(req);
    let ok = false;
    try {
      new Webhook(hookSecret).verify(raw, req.headers as Record<string, string>);
      ok = true;
    } catch {}
    const body = JSON.parse(raw) as { stage: string; texts: string[] };
    hookCalls.push({ ok, body });
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(body.texts.some((t) => t.includes('forbidden')) ? { action: 'block', reason: 'forbidden topic' } : { action: 'allow' }));
  });
  const upstreamPort = await listen(upstream);
  const claudePort = await listen(claude);
  const hookPort = await listen(hook);
  hookUrl = `http://127.0.0.1:${hookPort}/guard`;
  cp = await startControlPlane('guardrailsmatrix', { env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  const dir = mkdtempSync(join(tmpdir(), 'gw-guardrails-matrix-'));
  const providers = join(dir, 'providers.yaml');
  writeFileSync(
    providers,
    `providers:
  - name: upstream
    type: openai
    base_url: http://127.0.0.1:${upstreamPort}/v1
    models: [gpt-4o-mini]
  - name: claude
    type: anthropic
    base_url: http://127.0.0.1:${claudePort}
    api_key: sk-ant-matrix-provider-key
    models: [claude-matrix]
`,
  );
  // The webhook guard service listens on 127.0.0.1: the proxy may call it only with the rule lifted.
  proxy = await startProxy({ REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: cp.prefix, PROXY_PORT: '0', METRICS_PORT: '0', PROXY_HOST: '127.0.0.1', GATEWAY_CONFIG: providers, LOG_LEVEL: 'silent', GUARDRAIL_WEBHOOK_ALLOW_PRIVATE: 'true' });
  const keys = new RedisKeys(cp.prefix);
  queue = new Queue(keys.recordsQueue, { connection: cp.redis.duplicate({ maxRetriesPerRequest: null }), prefix: keys.bullPrefix });
});

afterAll(async () => {
  await proxy?.drain();
  await queue?.close();
  await cp?.close();
  upstream?.close();
  claude?.close();
  hook?.close();
});

function records(projectId: string): Promise<{ usage: UsageRecord[]; audit: AuditEvent[] }> {
  return queuedRecords(proxy, queue, projectId);
}

let projects = 0;
async function project(guardrails: unknown[]): Promise<{ id: string; key: string; secrets: Record<string, string> }> {
  const created = await cp.api('POST', '/v1/projects', { token: cp.adminToken, body: { name: `m ${++projects}` } });
  const key = await cp.api('POST', `/v1/projects/${created.body.id}/keys`, { token: cp.adminToken, body: { name: 'k' } });
  const put = await cp.api('PUT', `/v1/projects/${created.body.id}/guardrails`, { token: cp.adminToken, body: guardrails });
  expect(put.status, JSON.stringify(put.body)).toBe(200);
  const secrets: Record<string, string> = {};
  for (const g of put.body.data as { id: string; secret?: string }[]) if (g.secret !== undefined) secrets[g.id] = g.secret;
  return { id: created.body.id, key: key.body.key, secrets };
}

const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: `http://127.0.0.1:${proxy.port}/v1`, maxRetries: 0 });
const anthropic = (key: string) => new Anthropic({ apiKey: key, baseURL: `http://127.0.0.1:${proxy.port}`, maxRetries: 0 });
const secret = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789';

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the request to be refused');
}

/** An OpenAI SDK error as a comparable tuple. */
function openaiRefusal(err: unknown): [string, number | undefined, unknown, unknown] {
  expect(err).toBeInstanceOf(OpenAI.APIError);
  const e = err as InstanceType<typeof OpenAI.APIError>;
  return [e.constructor.name, e.status, e.code, e.param];
}

/** An Anthropic SDK error: its status, error type and message. */
function anthropicRefusal(err: unknown): { status: number | undefined; type: unknown; message: string } {
  expect(err).toBeInstanceOf(Anthropic.APIError);
  const e = err as InstanceType<typeof Anthropic.APIError>;
  const body = e.error as { type?: string; error?: { type?: string; message?: string } } | undefined;
  expect(body?.type).toBe('error');
  return { status: e.status, type: body?.error?.type, message: body?.error?.message ?? '' };
}

async function withAnswer<T>(chunks: string[], run: () => Promise<T>): Promise<T> {
  answerChunks = chunks;
  try {
    return await run();
  } finally {
    answerChunks = DEFAULT_ANSWER;
  }
}

/** Everything a /v1/messages stream delivered: its text and final stop reason. */
async function messagesStream(client: Anthropic, model: string): Promise<{ text: string; stop: string | null }> {
  const stream = client.messages.stream({ model, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
  let text = '';
  for await (const event of stream) if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
  return { text, stop: (await stream.finalMessage()).stop_reason };
}

/** Everything a /v1/responses stream delivered: its text deltas, the event types and the final response. */
async function responsesStream(client: OpenAI): Promise<{ text: string; types: string[]; final: OpenAI.Responses.Response | null }> {
  const stream = await client.responses.create({ model: 'gpt-4o-mini', input: 'hi', stream: true });
  let text = '';
  const types: string[] = [];
  let final: OpenAI.Responses.Response | null = null;
  for await (const event of stream) {
    types.push(event.type);
    if (event.type === 'response.output_text.delta') text += event.delta;
    if (event.type === 'response.completed' || event.type === 'response.incomplete' || event.type === 'response.failed') final = event.response;
  }
  return { text, types, final };
}

type Decided = [endpoint: string, outcome: string, status: number, code: string | null, guardrails: unknown];

/** The audit events as [endpoint, outcome, status, error code, guardrail decisions], in no particular order (batches may arrive in any). */
function expectDecisions(audit: AuditEvent[], expected: Decided[]): void {
  const got = audit.map((a) => JSON.stringify([a.endpoint ?? 'chat.completions', a.outcome, a.status, a.error_code ?? null, a.guardrails ?? null]));
  expect(got.sort()).toEqual(expected.map((e) => JSON.stringify(e)).sort());
}

const sorted = (values: (string | null)[]) => [...values].sort();

describe('guardrails matrix', () => {
  it('blocks a prompt on /v1/responses, whole and streamed: 400 GUARDRAIL_BLOCKED, no provider call, no usage', async () => {
    const p = await project([{ id: 'no-secrets', stage: 'input', action: 'block', type: 'pii', entities: ['secret'] }]);
    const calls = seen.length;
    const whole = await rejection(openai(p.key).responses.create({ model: 'gpt-4o-mini', input: `my key is ${secret}` }));
    expect(openaiRefusal(whole)).toEqual(['BadRequestError', 400, 'GUARDRAIL_BLOCKED', 'no-secrets']);
    const streamed = await rejection(openai(p.key).responses.create({ model: 'gpt-4o-mini', input: [{ role: 'user', content: [{ type: 'input_text', text: `key ${secret}` }] }], stream: true }));
    expect(openaiRefusal(streamed)).toEqual(['BadRequestError', 400, 'GUARDRAIL_BLOCKED', 'no-secrets']);
    expect(seen.length).toBe(calls);
    const out = await records(p.id);
    expect(out.usage).toEqual([]);
    const blocked: Decided = ['responses', 'policy_blocked', 400, 'GUARDRAIL_BLOCKED', [{ id: 'no-secrets', stage: 'input', action: 'block' }]];
    expectDecisions(out.audit, [blocked, blocked]);
    // The same project serves a clean prompt.
    const ok = await openai(p.key).responses.create({ model: 'gpt-4o-mini', input: 'hello' });
    expect(ok.output_text).toBe('Hello there');
  });

  it('runs regex guards on the prompt: a mask the provider sees as numbered placeholders, then a block', async () => {
    const p = await project([
      { id: 'tickets', stage: 'input', action: 'mask', type: 'regex', label: 'TICKET', patterns: ['TCK-[0-9]{3,}'] },
      { id: 'codenames', stage: 'input', action: 'block', type: 'regex', patterns: ['(?i)project[- ]?(falcon|osprey)'] },
    ]);
    await openai(p.key).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'close TCK-1234 and TCK-987' }, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'and TCK-1234 again' }] });
    expect(seen.at(-1)!.messages.map((m) => m.content)).toEqual(['close <TICKET_1> and <TICKET_2>', 'ok', 'and <TICKET_1> again']);
    await anthropic(p.key).messages.create({ model: 'gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'see TCK-555' }] });
    expect(JSON.stringify(seen.at(-1)!.messages)).toContain('see <TICKET_1>');
    expect(JSON.stringify(seen.at(-1)!.messages)).not.toContain('TCK-555');
    await openai(p.key).responses.create({ model: 'gpt-4o-mini', input: 'see TCK-777' });
    expect(JSON.stringify(seen.at(-1)!.messages)).toContain('see <TICKET_1>');
    expect(JSON.stringify(seen.at(-1)!.messages)).not.toContain('TCK-777');

    const calls = seen.length;
    const chat = await rejection(openai(p.key).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'status of Project Falcon?' }] }));
    expect(openaiRefusal(chat)).toEqual(['BadRequestError', 400, 'GUARDRAIL_BLOCKED', 'codenames']);
    const messages = await rejection(anthropic(p.key).messages.create({ model: 'gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'about project-osprey' }] }));
    const refusal = anthropicRefusal(messages);
    expect(refusal).toMatchObject({ status: 400, type: 'invalid_request_error' });
    expect(refusal.message).toBe('codenames: The guardrail `codenames` blocked the request.');
    expect(seen.length).toBe(calls);

    const out = await records(p.id);
    const masked = [{ id: 'tickets', stage: 'input', action: 'mask' }];
    const blocked = [{ id: 'codenames', stage: 'input', action: 'block' }];
    expectDecisions(out.audit, [
      ['chat.completions', 'success', 200, null, masked],
      ['messages', 'success', 200, null, masked],
      ['responses', 'success', 200, null, masked],
      ['chat.completions', 'policy_blocked', 400, 'GUARDRAIL_BLOCKED', blocked],
      ['messages', 'policy_blocked', 400, 'GUARDRAIL_BLOCKED', blocked],
    ]);
  });

  it('flags a prompt and an answer: both served unchanged, whole and streamed, and the decisions recorded', async () => {
    const p = await project([
      { id: 'watch-in', stage: 'input', action: 'flag', type: 'regex', patterns: ['(?i)falcon'] },
      { id: 'watch-out', stage: 'output', action: 'flag', type: 'pii', entities: ['email'] },
    ]);
    const answer = ['Write to ann', '@example.', 'com soon'];
    await withAnswer(answer, async () => {
      const whole = await openai(p.key).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'ask about falcon' }] });
      expect(seen.at(-1)!.messages.map((m) => m.content)).toEqual(['ask about falcon']);
      expect(whole.choices[0]!.message.content).toBe('Write to ann@example.com soon');
      expect(whole.choices[0]!.finish_reason).toBe('stop');
      const stream = await openai(p.key).chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'falcon again' }] });
      const parts: string[] = [];
      let finish: string | null = null;
      for await (const chunk of stream) {
        if (chunk.choices[0]?.delta.content) parts.push(chunk.choices[0].delta.content);
        finish = chunk.choices[0]?.finish_reason ?? finish;
      }
      expect(seen.at(-1)!.messages.map((m) => m.content)).toEqual(['falcon again']);
      expect(parts).toEqual(answer);
      expect(finish).toBe('stop');
      const message = await anthropic(p.key).messages.create({ model: 'gpt-4o-mini', max_tokens: 50, messages: [{ role: 'user', content: 'a falcon' }] });
      expect(message.content).toEqual([{ type: 'text', text: 'Write to ann@example.com soon' }]);
      expect(message.stop_reason).toBe('end_turn');
      const response = await openai(p.key).responses.create({ model: 'gpt-4o-mini', input: 'a falcon' });
      expect(response.output_text).toBe('Write to ann@example.com soon');
      expect(response.status).toBe('completed');
    });
    const out = await records(p.id);
    const both = [{ id: 'watch-in', stage: 'input', action: 'flag' }, { id: 'watch-out', stage: 'output', action: 'flag' }];
    expectDecisions(out.audit, [
      ['chat.completions', 'success', 200, null, both],
      ['chat.completions', 'success', 200, null, both],
      ['messages', 'success', 200, null, both],
      ['responses', 'success', 200, null, both],
    ]);
    expect(out.usage.map((u) => u.finish_reason)).toEqual(['stop', 'stop', 'stop', 'stop']);
  });

  it('blocks a prompt by a webhook guard on /v1/messages and /v1/responses', async () => {
    const p = await project([{ id: 'policy-svc', stage: 'input', action: 'block', type: 'webhook', url: hookUrl, timeout_ms: 2000, failure_mode: 'closed' }]);
    hookSecret = p.secrets['policy-svc']!;
    expect(hookSecret).toMatch(/^whsec_/);
    const calls = seen.length;
    const messages = await rejection(anthropic(p.key).messages.create({ model: 'gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'a forbidden topic' }] }));
    expect(anthropicRefusal(messages)).toMatchObject({ status: 400, type: 'invalid_request_error', message: 'policy-svc: The guardrail `policy-svc` blocked the request: forbidden topic' });
    expect(hookCalls.at(-1)).toMatchObject({ ok: true, body: { stage: 'input', texts: ['a forbidden topic'] } });
    const responses = await rejection(openai(p.key).responses.create({ model: 'gpt-4o-mini', instructions: 'be kind', input: 'another forbidden one' }));
    expect(openaiRefusal(responses)).toEqual(['BadRequestError', 400, 'GUARDRAIL_BLOCKED', 'policy-svc']);
    expect(hookCalls.at(-1)).toMatchObject({ ok: true, body: { stage: 'input' } });
    expect(hookCalls.at(-1)!.body.texts).toContain('another forbidden one');
    expect(seen.length).toBe(calls);
    // What the service allows is served.
    const ok = await anthropic(p.key).messages.create({ model: 'gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'a fine topic' }] });
    expect(ok.content).toEqual([{ type: 'text', text: 'Hello there' }]);
    expect((await openai(p.key).responses.create({ model: 'gpt-4o-mini', input: 'fine' })).output_text).toBe('Hello there');
    const out = await records(p.id);
    const blocked = [{ id: 'policy-svc', stage: 'input', action: 'block' }];
    expectDecisions(out.audit, [
      ['messages', 'policy_blocked', 400, 'GUARDRAIL_BLOCKED', blocked],
      ['responses', 'policy_blocked', 400, 'GUARDRAIL_BLOCKED', blocked],
      ['messages', 'success', 200, null, null],
      ['responses', 'success', 200, null, null],
    ]);
  });

  it('blocks a prompt by a moderation guard on /v1/messages and /v1/responses', async () => {
    const p = await project([{ id: 'moderation', stage: 'input', action: 'block', type: 'moderation', provider: 'upstream', thresholds: { violence: 0.5 } }]);
    const calls = seen.length;
    const messages = await rejection(anthropic(p.key).messages.create({ model: 'gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'plan an attack' }] }));
    const refusal = anthropicRefusal(messages);
    expect(refusal).toMatchObject({ status: 400, type: 'invalid_request_error' });
    expect(refusal.message).toBe('moderation: The guardrail `moderation` blocked the request: violence');
    const responses = await rejection(openai(p.key).responses.create({ model: 'gpt-4o-mini', input: 'plan an attack' }));
    expect(openaiRefusal(responses)).toEqual(['BadRequestError', 400, 'GUARDRAIL_BLOCKED', 'moderation']);
    expect(seen.length).toBe(calls);
    expect((await openai(p.key).responses.create({ model: 'gpt-4o-mini', input: 'plan a picnic' })).output_text).toBe('Hello there');
    const out = await records(p.id);
    const blocked = [{ id: 'moderation', stage: 'input', action: 'block' }];
    expectDecisions(out.audit, [
      ['messages', 'policy_blocked', 400, 'GUARDRAIL_BLOCKED', blocked],
      ['responses', 'policy_blocked', 400, 'GUARDRAIL_BLOCKED', blocked],
      ['responses', 'success', 200, null, null],
    ]);
  });

  it('masks emails in the answer on /v1/messages and /v1/responses, whole and streamed, one split across chunks', async () => {
    const p = await project([{ id: 'out-pii', stage: 'output', action: 'mask', type: 'pii', entities: ['email'] }]);
    const expected = 'Write to <EMAIL_1> or <EMAIL_2> soon';
    await withAnswer(['Write to ann', '@example.', 'com or ', 'bob@example.com', ' soon'], async () => {
      const message = await anthropic(p.key).messages.create({ model: 'gpt-4o-mini', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
      expect(message.content).toEqual([{ type: 'text', text: expected }]);
      expect(message.stop_reason).toBe('end_turn');
      expect(await messagesStream(anthropic(p.key), 'gpt-4o-mini')).toEqual({ text: expected, stop: 'end_turn' });
      const response = await openai(p.key).responses.create({ model: 'gpt-4o-mini', input: 'hi' });
      expect(response.output_text).toBe(expected);
      expect(response.status).toBe('completed');
      const streamed = await responsesStream(openai(p.key));
      expect(streamed.text).toBe(expected);
      expect(streamed.final?.status).toBe('completed');
      expect(streamed.final?.output_text ?? JSON.stringify(streamed.final?.output)).toContain(expected);
      expect(JSON.stringify(streamed.final)).not.toContain('example.com');
    });
    const out = await records(p.id);
    const masked = [{ id: 'out-pii', stage: 'output', action: 'mask' }];
    expectDecisions(out.audit, [
      ['messages', 'success', 200, null, masked],
      ['messages', 'success', 200, null, masked],
      ['responses', 'success', 200, null, masked],
      ['responses', 'success', 200, null, masked],
    ]);
  });

  it('ends a /v1/responses stream whose answer is blocked as incomplete, reason content_filter', async () => {
    const p = await project([{ id: 'codenames', stage: 'output', action: 'block', type: 'regex', patterns: ['(?i)project[- ]?(falcon|osprey)'] }]);
    await withAnswer(['The plan: Proj', 'ect Fal', 'con, then ', 'lunch'], async () => {
      const streamed = await responsesStream(openai(p.key));
      expect(streamed.text).not.toMatch(/falcon/i);
      expect(streamed.types.at(-1)).toBe('response.incomplete');
      expect(streamed.types).not.toContain('response.completed');
      expect(streamed.final?.status).toBe('incomplete');
      expect(streamed.final?.incomplete_details?.reason).toBe('content_filter');
      expect(JSON.stringify(streamed.final)).not.toMatch(/falcon/i);
    });
    const out = await records(p.id);
    expectDecisions(out.audit, [['responses', 'policy_blocked', 200, null, [{ id: 'codenames', stage: 'output', action: 'block' }]]]);
    expect(out.usage.map((u) => u.finish_reason)).toEqual(['content_filter']);
  });

  it('checks the answers of an Anthropic provider on /v1/messages: a blocked word never reaches the client', async () => {
    const p = await project([{ id: 'codenames', stage: 'output', action: 'block', type: 'regex', patterns: ['(?i)project[- ]?(falcon|osprey)'] }]);
    await withAnswer(['The plan: Proj', 'ect Fal', 'con, then ', 'lunch'], async () => {
      const calls = claudeSeen.length;
      const message = await anthropic(p.key).messages.create({ model: 'claude-matrix', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
      expect(claudeSeen.length).toBe(calls + 1);
      expect(message.stop_reason).toBe('refusal');
      expect(JSON.stringify(message.content)).not.toMatch(/falcon/i);
      const streamed = await messagesStream(anthropic(p.key), 'claude-matrix');
      expect(claudeSeen.length).toBe(calls + 2);
      expect(claudeSeen.at(-1)!.stream).toBe(true);
      expect(streamed.stop).toBe('refusal');
      expect(streamed.text).not.toMatch(/fal/i);
    });
    // A clean answer of the same provider is delivered whole.
    await withAnswer(['All ', 'quiet ', 'here'], async () => {
      const message = await anthropic(p.key).messages.create({ model: 'claude-matrix', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
      expect(message.content).toEqual([{ type: 'text', text: 'All quiet here' }]);
      expect(message.stop_reason).toBe('end_turn');
      expect(await messagesStream(anthropic(p.key), 'claude-matrix')).toEqual({ text: 'All quiet here', stop: 'end_turn' });
    });
    const out = await records(p.id);
    const blocked = [{ id: 'codenames', stage: 'output', action: 'block' }];
    expectDecisions(out.audit, [
      ['messages', 'policy_blocked', 200, null, blocked],
      ['messages', 'policy_blocked', 200, null, blocked],
      ['messages', 'success', 200, null, null],
      ['messages', 'success', 200, null, null],
    ]);
    expect(out.audit.every((a) => a.provider === 'claude')).toBe(true);
    expect(sorted(out.usage.map((u) => u.finish_reason))).toEqual(['content_filter', 'content_filter', 'stop', 'stop']);
  });
});
