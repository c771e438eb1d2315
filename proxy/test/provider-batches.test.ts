import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness as startControlPlane, type Harness as ControlPlaneHarness } from '../../control-plane/test/harness.js';
import { startWriter, type Writer } from '../../control-plane/src/writer/start-writer.js';
import { TEST_REDIS_URL } from '../../test-support/databases.js';
import { eventually } from '../../test-support/processes.js';
import { freePort } from '../../test-support/services.js';
import { startOpenAiBatchMock, type OpenAiBatchMock } from '../../test-support/openai-batch-mock.js';
import { startAnthropicBatchMock, type AnthropicBatchMock } from '../../test-support/anthropic-batch-mock.js';
import { startProxy, type Proxy } from '../src/proxy.js';
import { batchEnded, batchRecords, jsonLines, uploadLines } from './batch-client.js';

/**
 * Provider-run batches (`batch: native`) with the official SDKs, against mocks of OpenAI's Batch
 * API and Anthropic's Message Batches: the lines the gateway admits go to the provider as one
 * batch, the rest of the guarantees as for a gateway-run batch — one usage record (at the batch
 * price) and one audit event per line, cancel and key deletion reaching the provider's batch,
 * and a batch whose proxy stopped collected by the next one.
 */
const TOKEN = 'provider-batches-internal-token-0123456789';
const OPENAI_KEY = 'sk-openai-batch-provider-secret-0123456789';
const ANTHROPIC_KEY = 'sk-ant-batch-provider-secret-0123456789';
let cp: ControlPlaneHarness;
let proxy: Proxy;
let writer: Writer;
let openaiMock: OpenAiBatchMock;
let anthropicMock: AnthropicBatchMock;
let azureMock: OpenAiBatchMock;
const AZURE_KEY = 'azure-batch-provider-secret-0123456789';
let openai: OpenAI;
let anthropic: Anthropic;
let projectId: string;
let proxyEnv: Record<string, string>;

async function newKey(): Promise<string> {
  return (await cp.api<{ key: string }>('POST', `/v1/projects/${projectId}/keys`, { token: cp.adminToken, body: { name: 'batch key' } })).body.key;
}

beforeAll(async () => {
  cp = await startControlPlane('provider_batches', { env: { INTERNAL_TOKEN: TOKEN } });
  openaiMock = await startOpenAiBatchMock(OPENAI_KEY, (line) => {
    const text = JSON.stringify(line.body.messages);
    const usage = text.includes('small') ? { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 } : { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 };
    return { status: 200, body: { id: 'chatcmpl-b', object: 'chat.completion', created: 1, model: line.body.model, choices: [{ index: 0, message: { role: 'assistant', content: `batched: ${text}` }, finish_reason: 'stop' }], usage } };
  });
  anthropicMock = await startAnthropicBatchMock(ANTHROPIC_KEY, (request) =>
    JSON.stringify(request.params.messages).includes('refuse me')
      ? { type: 'errored', error: { type: 'error', error: { type: 'invalid_request_error', message: 'messages.0: this request is refused' } } }
      : {
          type: 'succeeded',
          message: { id: 'msg_b', type: 'message', role: 'assistant', model: request.params.model, content: [{ type: 'text', text: 'claude batched' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 2000, output_tokens: 100 } },
        },
  );
  azureMock = await startOpenAiBatchMock(
    AZURE_KEY,
    (line) => ({ status: 200, body: { id: 'chatcmpl-az', object: 'chat.completion', created: 1, model: line.body.model, choices: [{ index: 0, message: { role: 'assistant', content: 'from azure' }, finish_reason: 'stop' }], usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 } } }),
    { apiVersion: '2024-10-21' },
  );
  const dir = mkdtempSync(join(tmpdir(), 'gw-provider-batches-'));
  const providers = join(dir, 'providers.yaml');
  writeFileSync(
    providers,
    [
      'providers:',
      '  - name: openai-batches',
      '    type: openai',
      `    base_url: ${openaiMock.baseUrl}/v1`,
      `    api_key: ${OPENAI_KEY}`,
      '    batch: native',
      '    models: [{ id: gpt-batch, upstream: gpt-4o-mini-2024-07-18, price: { input: 2, output: 8 } }]',
      '  - name: claude-batches',
      '    type: anthropic',
      `    base_url: ${anthropicMock.baseUrl}`,
      `    api_key: ${ANTHROPIC_KEY}`,
      '    batch: native',
      '    models: [{ id: claude-batch, upstream: claude-sonnet-4-5-20250929, price: { input: 3, output: 15, batch: { input: 1, output: 5 } } }]',
      '  - name: azure-batches',
      '    type: azure',
      `    base_url: ${azureMock.baseUrl}`,
      `    api_key: ${AZURE_KEY}`,
      '    batch: native',
      '    models: [{ id: azure-batch, upstream: my-global-batch-deployment, price: { input: 1, output: 1 } }]',
      '  - name: offline',
      '    type: mock',
      '    models: [mock-1]',
      '',
    ].join('\n'),
  );
  const env = { REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: cp.prefix, LOG_LEVEL: 'silent' };
  proxyEnv = { ...env, PROXY_PORT: '0', METRICS_PORT: '0', PROXY_HOST: '127.0.0.1', GATEWAY_CONFIG: providers, CONTROL_PLANE_URL: cp.base, INTERNAL_TOKEN: TOKEN, BATCH_POLL_MS: '50' };
  proxy = await startProxy(proxyEnv);
  writer = await startWriter({ ...env, DATABASE_URL: cp.db.url, WRITER_PORT: String(await freePort()), RECORD_FLUSH_MS: '50' });
  projectId = (await cp.api<{ id: string }>('POST', '/v1/projects', { token: cp.adminToken, body: { name: 'provider batches' } })).body.id;
  const key = await newKey();
  openai = new OpenAI({ apiKey: key, baseURL: `http://127.0.0.1:${proxy.port}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: key, baseURL: `http://127.0.0.1:${proxy.port}`, maxRetries: 0 });
}, 60_000);

afterAll(async () => {
  openaiMock?.release();
  anthropicMock?.release();
  await proxy?.drain();
  await writer?.close();
  await openaiMock?.close();
  await anthropicMock?.close();
  await azureMock?.close();
  await cp?.close();
});

function chatLine(customId: string, text: string, model: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/chat/completions', body: { model, messages: [{ role: 'user', content: text }], max_tokens: 50, ...extra } });
}

async function upload(lines: string[], client = openai): Promise<OpenAI.FileObject> {
  return uploadLines(client, lines);
}

async function ended(id: string, client = openai): Promise<OpenAI.Batch> {
  return batchEnded(client, id);
}

interface UsageRow {
  cost_usd: number | null;
  provider: string;
  tokens: { input: number; output: number };
}

/** The provider batch the gateway made for a batch of ours, once it has (its metadata names ours). */
function providerBatch<B extends { metadata: Record<string, string> | null }>(mock: { batches: B[] }, batchId: string): Promise<B> {
  return eventually(async () => mock.batches.find((b) => b.metadata?.gateway_batch?.startsWith(batchId)) ?? Promise.reject(new Error('none yet')), 'the provider batch', 20_000);
}

/** A new project (with `extra` fields: a quota) and a client of a key of it. */
async function limitedProject(name: string, extra: Record<string, unknown> = {}): Promise<{ project: string; client: OpenAI }> {
  const project = (await cp.api<{ id: string }>('POST', '/v1/projects', { token: cp.adminToken, body: { name, ...extra } })).body.id;
  const key = (await cp.api<{ key: string }>('POST', `/v1/projects/${project}/keys`, { token: cp.adminToken, body: { name: 'k' } })).body.key;
  return { project, client: new OpenAI({ apiKey: key, baseURL: `http://127.0.0.1:${proxy.port}/v1`, maxRetries: 0 }) };
}

/** Lines asking gpt-batch for up to 1,000 tokens, sent as one batch, its provider batch answered at once: the batch and how many lines reached the provider. */
async function runReleased(client: OpenAI, ids: string[]): Promise<{ batch: OpenAI.Batch; sent: number }> {
  const line = (id: string) => JSON.stringify({ custom_id: id, method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-batch', messages: [{ role: 'user', content: 'small' }], max_tokens: 1000 } });
  const created = await client.batches.create({ input_file_id: (await upload(ids.map(line), client)).id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  const upstream = await providerBatch(openaiMock, created.id);
  openaiMock.release(upstream.id);
  return { batch: await ended(created.id, client), sent: upstream.lines.length };
}

function records(batchId: string, lines: number) {
  return batchRecords<UsageRow>(cp, projectId, batchId, lines);
}

describe('provider-run batches at OpenAI', () => {
  it("sends the admitted lines as one OpenAI batch, every field as sent, and answers each line from its results at the batch price", async () => {
    const lines = [
      chatLine('first', 'one', 'gpt-batch', { temperature: 0.2, a_field_of_tomorrow: { keep: true } }),
      chatLine('second', 'two', 'gpt-batch'),
      chatLine('on-the-gateway', 'three', 'mock-1'),
      chatLine('refused', 'four', 'not-served-9'),
    ];
    const created = await openai.batches.create({ input_file_id: (await upload(lines)).id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const upstream = await providerBatch(openaiMock, created.id);
    // Only the lines routed to the provider, with the provider's model id and every other field as the client sent it.
    expect(upstream.endpoint).toBe('/v1/chat/completions');
    expect(upstream.lines.map((l) => l.url)).toEqual(['/v1/chat/completions', '/v1/chat/completions']);
    expect(upstream.lines.map((l) => l.custom_id)).toEqual(['l0', 'l1']);
    expect(upstream.lines[0]!.body).toMatchObject({ model: 'gpt-4o-mini-2024-07-18', temperature: 0.2, a_field_of_tomorrow: { keep: true }, max_tokens: 50 });
    expect(upstream.lines[0]!.body.stream).toBeUndefined();
    expect((await openai.batches.retrieve(created.id)).status).toBe('in_progress');

    openaiMock.release(upstream.id);
    const batch = await ended(created.id);
    expect(batch.status).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 4, completed: 3, failed: 1 });
    const output = jsonLines(await (await openai.files.content(batch.output_file_id!)).text());
    expect(output.map((line) => line.custom_id)).toEqual(['first', 'second', 'on-the-gateway']);
    expect(output[0]!.response.body.choices[0].message.content).toContain('one');
    const errors = jsonLines(await (await openai.files.content(batch.error_file_id!)).text());
    expect(errors.map((line) => [line.custom_id, line.response.status_code])).toEqual([['refused', 404]]);

    const { usage, audit } = await records(batch.id, 4);
    expect(audit.filter((e) => e.type === 'gateway.request').map((e) => e.status).sort()).toEqual([200, 200, 200, 404]);
    const native = usage.filter((r) => r.provider === 'openai-batches');
    expect(native).toHaveLength(2);
    // Half of { input: 2, output: 8 } per million tokens: 1,000 × 1 + 500 × 4.
    for (const record of native) {
      expect(record.tokens).toMatchObject({ input: 1000, output: 500 });
      expect(record.cost_usd).toBeCloseTo(0.003, 10);
    }
    expect(usage.filter((r) => r.provider === 'offline')).toHaveLength(1);
  });

  it('cancels the provider batch when the client cancels', async () => {
    const created = await openai.batches.create({ input_file_id: (await upload([chatLine('c1', 'x', 'gpt-batch'), chatLine('c2', 'y', 'gpt-batch')])).id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const upstream = await providerBatch(openaiMock, created.id);
    await openai.batches.cancel(created.id);
    const batch = await ended(created.id);
    expect(batch.status).toBe('cancelled');
    expect(upstream.cancelled).toBe(true);
    expect(batch.request_counts).toMatchObject({ total: 2, completed: 0 });
  });

  it("cancels the provider batch of a deleted key: its lines end UNAUTHORIZED", async () => {
    const doomed = await newKey();
    const client = new OpenAI({ apiKey: doomed, baseURL: `http://127.0.0.1:${proxy.port}/v1`, maxRetries: 0 });
    const created = await client.batches.create({ input_file_id: (await upload([chatLine('k1', 'x', 'gpt-batch'), chatLine('k2', 'y', 'gpt-batch')], client)).id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const upstream = await providerBatch(openaiMock, created.id);
    const keys = await cp.api<{ data: { id: string; prefix: string }[] }>('GET', `/v1/projects/${projectId}/keys`, { token: cp.adminToken });
    const keyId = keys.body.data.find((k) => doomed.startsWith(k.prefix))!.id;
    expect((await cp.api('DELETE', `/v1/projects/${projectId}/keys/${keyId}`, { token: cp.adminToken })).status).toBe(204);
    const batch = await ended(created.id);
    expect(batch.status).toBe('cancelled');
    expect(upstream.cancelled).toBe(true);
    const errors = jsonLines(await (await openai.files.content(batch.error_file_id!)).text());
    expect(errors.map((line) => line.response.status_code)).toEqual([401, 401]);
  });

  it('answers the lines as failed, each audited, when the provider will not take the batch', async () => {
    openaiMock.refuseBatches = true;
    try {
      const created = await openai.batches.create({ input_file_id: (await upload([chatLine('n1', 'x', 'gpt-batch'), chatLine('n2', 'y', 'gpt-batch')])).id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      const batch = await ended(created.id);
      expect(batch.status).toBe('completed');
      expect(batch.request_counts).toEqual({ total: 2, completed: 0, failed: 2 });
      const errors = jsonLines(await (await openai.files.content(batch.error_file_id!)).text());
      expect(errors.map((l) => [l.custom_id, l.response.status_code, l.response.body.error.code])).toEqual([
        ['n1', 502, 'UPSTREAM_ERROR'],
        ['n2', 502, 'UPSTREAM_ERROR'],
      ]);
      const { audit } = await records(batch.id, 2);
      expect(audit.filter((e) => e.type === 'gateway.request').map((e) => e.status)).toEqual([502, 502]);
    } finally {
      openaiMock.refuseBatches = false;
    }
  });

  it('is collected by another proxy when the one that sent it stopped', async () => {
    const created = await openai.batches.create({ input_file_id: (await upload([chatLine('r1', 'x', 'gpt-batch'), chatLine('r2', 'y', 'gpt-batch')])).id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const upstream = await providerBatch(openaiMock, created.id);
    const next = await startProxy(proxyEnv);
    await proxy.drain();
    proxy = next;
    openai = new OpenAI({ apiKey: openai.apiKey, baseURL: `http://127.0.0.1:${proxy.port}/v1`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: anthropic.apiKey, baseURL: `http://127.0.0.1:${proxy.port}`, maxRetries: 0 });
    openaiMock.release(upstream.id);
    const batch = await ended(created.id);
    expect(batch.status).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
    // Sent once, answered once, recorded once.
    expect(openaiMock.batches.filter((b) => b.metadata?.gateway_batch?.startsWith(created.id))).toHaveLength(1);
    const { usage } = await records(batch.id, 2);
    expect(usage).toHaveLength(2);
  });
});

describe('provider-run batches at Azure OpenAI', () => {
  it("sends the lines to Azure's Batch API under its own paths, with the deployment as the model", async () => {
    const created = await openai.batches.create({ input_file_id: (await upload([chatLine('az1', 'x', 'azure-batch'), chatLine('az2', 'y', 'azure-batch')])).id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const upstream = await providerBatch(azureMock, created.id);
    expect(upstream.endpoint).toBe('/chat/completions');
    expect(upstream.lines.map((l) => [l.url, l.body.model])).toEqual([
      ['/chat/completions', 'my-global-batch-deployment'],
      ['/chat/completions', 'my-global-batch-deployment'],
    ]);
    azureMock.release(upstream.id);
    const batch = await ended(created.id);
    expect(batch.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
    const output = jsonLines(await (await openai.files.content(batch.output_file_id!)).text());
    expect(output.map((l) => l.response.body.choices[0].message.content)).toEqual(['from azure', 'from azure']);
  });
});

describe('provider-run batches and the response cache', () => {
  it('runs identical lines of a project with the cache on, on both kinds of provider, without any waiting for another forever', async () => {
    const project = (await cp.api<{ id: string }>('POST', '/v1/projects', { token: cp.adminToken, body: { name: 'batch cache' } })).body.id;
    const key = (await cp.api<{ key: string }>('POST', `/v1/projects/${project}/keys`, { token: cp.adminToken, body: { name: 'k' } })).body.key;
    expect((await cp.api('PATCH', `/v1/projects/${project}`, { token: cp.adminToken, body: { cache: { mode: 'exact', ttl_seconds: 600 } } })).status).toBe(200);
    const client = new OpenAI({ apiKey: key, baseURL: `http://127.0.0.1:${proxy.port}/v1`, maxRetries: 0 });
    const lines = [
      ...Array.from({ length: 4 }, (_, i) => chatLine(`native-${i}`, 'the same question', 'gpt-batch')),
      ...Array.from({ length: 4 }, (_, i) => chatLine(`gateway-${i}`, 'the same question', 'mock-1')),
    ];
    const created = await client.batches.create({ input_file_id: (await upload(lines, client)).id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const upstream = await providerBatch(openaiMock, created.id);
    openaiMock.release(upstream.id);
    const batch = await ended(created.id, client);
    expect(batch.request_counts).toEqual({ total: 8, completed: 8, failed: 0 });
  });
});

describe('provider-run batches and budgets', () => {
  it('holds a budget across the lines of one provider batch, and gives back what the answers did not cost', async () => {
    const { project, client } = await limitedProject('batch budget');
    const made = await cp.api('POST', `/v1/projects/${project}/budgets`, { token: cp.adminToken, body: { scope: 'project', limit_usd: 0.02, period: 'month' } });
    expect(made.status, made.text).toBe(201);
    // Each line's worst case is about $0.008 (1,000 output tokens at $8 per million): two fit in $0.02, a third does not.
    const first = await runReleased(client, ['a', 'b', 'c']);
    expect(first.sent).toBe(2);
    expect(first.batch.request_counts).toEqual({ total: 3, completed: 2, failed: 1 });
    const refused = jsonLines(await (await client.files.content(first.batch.error_file_id!)).text());
    expect(refused.map((l) => [l.custom_id, l.response.body.error.code])).toEqual([['c', 'BUDGET_EXCEEDED']]);
    // The two answers cost $0.00009 each at the batch price: the rest of their worst case is given back, so two more fit.
    const second = await runReleased(client, ['d', 'e']);
    expect(second.sent).toBe(2);
    expect(second.batch.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
  });

  it("holds the project's token quota the same way", async () => {
    // Each line reserves about 1,005 tokens (its prompt and max_tokens 1,000): two fit in 2,500, a third does not.
    const { client } = await limitedProject('batch quota', { quota_tokens: 2500 });
    const first = await runReleased(client, ['a', 'b', 'c']);
    expect(first.sent).toBe(2);
    const refused = jsonLines(await (await client.files.content(first.batch.error_file_id!)).text());
    expect(refused.map((l) => l.response.body.error.code)).toEqual(['QUOTA_EXCEEDED']);
    // The answers used 30 tokens each: the rest of their reservations is given back.
    const second = await runReleased(client, ['d', 'e']);
    expect(second.sent).toBe(2);
  });
});

describe("provider-run batches at Anthropic", () => {
  it('sends a Message Batch to Anthropic as its params came and serves the results at price.batch', async () => {
    const created = await anthropic.messages.batches.create({
      requests: [
        { custom_id: 'native-1', params: { model: 'claude-batch', max_tokens: 64, messages: [{ role: 'user', content: 'hello' }], thinking: { type: 'enabled', budget_tokens: 1024 } } as never },
        { custom_id: 'native-2', params: { model: 'claude-batch', max_tokens: 64, messages: [{ role: 'user', content: 'again' }] } },
        { custom_id: 'native-3', params: { model: 'claude-batch', max_tokens: 64, messages: [{ role: 'user', content: 'refuse me' }] } },
      ],
    });
    const upstream = await eventually(async () => anthropicMock.batches.at(-1) ?? Promise.reject(new Error('none yet')), 'the provider batch', 20_000);
    expect(upstream.requests.map((r) => r.custom_id)).toEqual(['l0', 'l1', 'l2']);
    expect(upstream.requests[0]!.params).toMatchObject({ model: 'claude-sonnet-4-5-20250929', max_tokens: 64, thinking: { type: 'enabled', budget_tokens: 1024 } });
    anthropicMock.release(upstream.id);
    const batch = await eventually(async () => {
      const found = await anthropic.messages.batches.retrieve(created.id);
      if (found.processing_status !== 'ended') throw new Error(found.processing_status);
      return found;
    }, 'the message batch to end', 30_000);
    expect(batch.request_counts).toMatchObject({ succeeded: 2, errored: 1 });
    const results = [];
    for await (const result of await anthropic.messages.batches.results(created.id)) results.push(result);
    expect(results.map((r) => r.custom_id)).toEqual(['native-1', 'native-2', 'native-3']);
    expect(results[0]!.result).toMatchObject({ type: 'succeeded', message: { content: [{ type: 'text', text: 'claude batched' }] } });
    // Anthropic's refusal of the line, in Anthropic's error shape.
    expect(results[2]!.result).toMatchObject({ type: 'errored', error: { type: 'error', error: { type: 'invalid_request_error' } } });
    const { usage, audit } = await records(batch.id, 3);
    expect(audit.filter((e) => e.type === 'gateway.request').map((e) => e.status).sort()).toEqual([200, 200, 400]);
    // price.batch { input: 1, output: 5 }: 2,000 × 1 + 100 × 5 per million.
    expect(usage.filter((r) => r.cost_usd !== 0).map((r) => r.cost_usd)).toEqual([0.0025, 0.0025]);
  });

  it('translates a Message Batch to an OpenAI batch and answers in Anthropic\'s shape', async () => {
    const created = await anthropic.messages.batches.create({
      requests: [{ custom_id: 'across', params: { model: 'gpt-batch', max_tokens: 32, system: 'be brief', messages: [{ role: 'user', content: 'translate me' }] } }],
    });
    const upstream = await providerBatch(openaiMock, created.id);
    expect(upstream.lines[0]!.body).toMatchObject({ model: 'gpt-4o-mini-2024-07-18', messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'translate me' }] });
    openaiMock.release(upstream.id);
    await eventually(async () => {
      const found = await anthropic.messages.batches.retrieve(created.id);
      if (found.processing_status !== 'ended') throw new Error(found.processing_status);
      return found;
    }, 'the message batch to end', 30_000);
    const results = [];
    for await (const result of await anthropic.messages.batches.results(created.id)) results.push(result);
    expect(results[0]).toMatchObject({ custom_id: 'across', result: { type: 'succeeded', message: { type: 'message', role: 'assistant', usage: { input_tokens: 1000, output_tokens: 500 } } } });
  });
});

describe('a batch waiting for its provider batch, polled once an hour', () => {
  it('is woken by a cancel and by its key deletion: the provider batch is cancelled at once, not at the next poll', async () => {
    const next = await startProxy({ ...proxyEnv, BATCH_POLL_MS: '3600000' });
    await proxy.drain();
    proxy = next;
    openai = new OpenAI({ apiKey: openai.apiKey, baseURL: `http://127.0.0.1:${proxy.port}/v1`, maxRetries: 0 });
    const doomed = await newKey();
    const client = new OpenAI({ apiKey: doomed, baseURL: `http://127.0.0.1:${proxy.port}/v1`, maxRetries: 0 });
    const waiting = async (batchId: string) => {
      const upstream = await providerBatch(openaiMock, batchId);
      // Polled once and found running: the job now waits an hour in the delayed set.
      await eventually(async () => {
        const row = await cp.sql<{ n: number }[]>`select count(*)::int as n from batch_submissions s join batches b on b.id = s.batch_id where b.id = ${batchId}`;
        return row[0]!.n === 1;
      }, 'the submission', 20_000);
      return upstream;
    };

    const cancelled = await client.batches.create({ input_file_id: (await upload([chatLine('w1', 'x', 'gpt-batch')], client)).id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const first = await waiting(cancelled.id);
    await client.batches.cancel(cancelled.id);
    await eventually(async () => first.cancelled || Promise.reject(new Error('not cancelled at the provider yet')), 'the provider batch cancelled', 20_000);

    const deleted = await client.batches.create({ input_file_id: (await upload([chatLine('w2', 'y', 'gpt-batch')], client)).id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const second = await waiting(deleted.id);
    const keys = await cp.api<{ data: { id: string; prefix: string }[] }>('GET', `/v1/projects/${projectId}/keys`, { token: cp.adminToken });
    const keyId = keys.body.data.find((k) => doomed.startsWith(k.prefix))!.id;
    expect((await cp.api('DELETE', `/v1/projects/${projectId}/keys/${keyId}`, { token: cp.adminToken })).status).toBe(204);
    await eventually(async () => second.cancelled || Promise.reject(new Error('not cancelled at the provider yet')), 'the provider batch cancelled', 20_000);
    const batch = await ended(deleted.id);
    expect(batch.status).toBe('cancelled');
  });
});
