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
import { startVertexBatchMock, type MockPredictionJob, type VertexBatchMock } from '../../test-support/vertex-batch-mock.js';
import { startProxy, type Proxy } from '../src/proxy.js';
import { batchEnded, batchRecords, jsonLines, uploadLines } from './batch-client.js';

/**
 * Provider-run batches at Vertex AI (`batch: native` on a vertex entry) with the official `openai`
 * and `@anthropic-ai/sdk` clients, against a mock of Vertex AI's batch prediction, the Cloud
 * Storage JSON API and the service account's token endpoint: one job per model (Gemini and
 * Claude), each line the body of the model's online method, answered from the job's predictions
 * at the batch price with one usage record and one audit event, whatever order they come in.
 */
const TOKEN = 'vertex-batches-internal-token-0123456789';
const LOCATION = 'us-central1';
let cp: ControlPlaneHarness;
let proxy: Proxy;
let writer: Writer;
let mock: VertexBatchMock;
let openai: OpenAI;
let anthropic: Anthropic;
let projectId: string;

beforeAll(async () => {
  cp = await startControlPlane('vertex_batches', { env: { INTERNAL_TOKEN: TOKEN } });
  const dir = mkdtempSync(join(tmpdir(), 'gw-vertex-batches-'));
  mock = await startVertexBatchMock(dir, LOCATION, (line, model) => {
    const text = JSON.stringify(line.request);
    if (text.includes('refuse me')) return { status: 'Bad Request: {"error": {"code": 400, "message": "Request contains an invalid argument.", "status": "INVALID_ARGUMENT"}}' };
    if (model.startsWith('publishers/anthropic/')) {
      return { response: { id: 'msg_vb', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text: `claude on vertex: ${text.length}` }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 2000, output_tokens: 100 } } };
    }
    return {
      response: {
        candidates: [{ content: { role: 'model', parts: [{ text: `gemini batched: ${JSON.stringify(line.request.contents)}` }] }, finishReason: 'STOP' }],
        usageMetadata: { promptTokenCount: 1000, candidatesTokenCount: 500, totalTokenCount: 1500 },
        modelVersion: 'gemini-2.5-flash',
        responseId: 'resp-vb',
      },
    };
  });
  const providers = join(dir, 'providers.yaml');
  writeFileSync(
    providers,
    [
      'providers:',
      '  - name: vertex-batches',
      '    type: vertex',
      '    project: gateway-test-project',
      `    location: ${LOCATION}`,
      `    base_url: ${mock.baseUrl}`,
      `    credentials_file: ${mock.keyFile}`,
      '    batch: native',
      '    batch_gcs_uri: gs://gateway-batches/vertex',
      `    storage_url: ${mock.baseUrl}`,
      '    models:',
      '      - { id: gemini-batch, upstream: gemini-2.5-flash, price: { input: 2, output: 8 } }',
      '      - { id: claude-vertex, upstream: "claude-sonnet-4-5@20250929", price: { input: 3, output: 15 } }',
      '',
    ].join('\n'),
  );
  const env = { REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: cp.prefix, LOG_LEVEL: 'silent' };
  proxy = await startProxy({ ...env, PROXY_PORT: '0', METRICS_PORT: '0', PROXY_HOST: '127.0.0.1', GATEWAY_CONFIG: providers, CONTROL_PLANE_URL: cp.base, INTERNAL_TOKEN: TOKEN, BATCH_POLL_MS: '50' });
  writer = await startWriter({ ...env, DATABASE_URL: cp.db.url, WRITER_PORT: String(await freePort()), RECORD_FLUSH_MS: '50' });
  projectId = (await cp.api<{ id: string }>('POST', '/v1/projects', { token: cp.adminToken, body: { name: 'vertex batches' } })).body.id;
  const key = (await cp.api<{ key: string }>('POST', `/v1/projects/${projectId}/keys`, { token: cp.adminToken, body: { name: 'batch key' } })).body.key;
  openai = new OpenAI({ apiKey: key, baseURL: `http://127.0.0.1:${proxy.port}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: key, baseURL: `http://127.0.0.1:${proxy.port}`, maxRetries: 0 });
}, 60_000);

afterAll(async () => {
  mock?.release();
  await proxy?.drain();
  await writer?.close();
  await mock?.close();
  await cp?.close();
});

function chatLine(customId: string, text: string, model: string): string {
  return JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/chat/completions', body: { model, messages: [{ role: 'user', content: text }], max_tokens: 64 } });
}

/** The jobs the gateway made for a batch of ours (their display names start with our batch id). */
function jobsOf(batchId: string, count: number): Promise<MockPredictionJob[]> {
  return eventually(async () => {
    const found = mock.jobs.filter((j) => j.displayName.startsWith(batchId));
    if (found.length < count) throw new Error('not all jobs yet');
    return found;
  }, 'the batch prediction jobs', 20_000);
}

interface UsageRow {
  cost_usd: number | null;
  provider: string;
  model: string;
}

function records(batchId: string, lines: number) {
  return batchRecords<UsageRow>(cp, projectId, batchId, lines);
}

describe('provider-run batches at Vertex AI', () => {
  it("sends each model's lines as one batch prediction job through Cloud Storage and answers every line from the predictions at the batch price", async () => {
    const lines = [chatLine('g1', 'gemini one', 'gemini-batch'), chatLine('c1', 'claude one', 'claude-vertex'), chatLine('g2', 'gemini two', 'gemini-batch'), chatLine('g3', 'refuse me', 'gemini-batch')];
    const created = await openai.batches.create({ input_file_id: (await uploadLines(openai, lines)).id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const jobs = await jobsOf(created.id, 2);
    const gemini = jobs.find((j) => j.model === 'publishers/google/models/gemini-2.5-flash')!;
    const claude = jobs.find((j) => j.model === 'publishers/anthropic/models/claude-sonnet-4-5@20250929')!;
    // Each line the body of the model's online method: Gemini's contents, Claude's Messages body for Vertex.
    expect(gemini.lines.map((l) => l.custom_id)).toEqual(['l0', 'l2', 'l3']);
    expect(gemini.lines[0]!.request).toMatchObject({ contents: [{ role: 'user', parts: [{ text: 'gemini one' }] }], generationConfig: { maxOutputTokens: 64 }, labels: { gateway_line: 'l0' } });
    expect(claude.lines[0]).toMatchObject({ custom_id: 'l1', request: { anthropic_version: 'vertex-2023-10-16', max_tokens: 64, messages: [{ role: 'user', content: 'claude one' }] } });
    expect((await openai.batches.retrieve(created.id)).status).toBe('in_progress');

    mock.release();
    const batch = await batchEnded(openai, created.id);
    expect(batch.status).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 4, completed: 3, failed: 1 });
    const output = jsonLines(await (await openai.files.content(batch.output_file_id!)).text());
    expect(output.map((l) => l.custom_id)).toEqual(['g1', 'c1', 'g2']);
    expect(output[0]!.response.body.choices[0].message.content).toContain('gemini one');
    expect(output[1]!.response.body.choices[0].message.content).toContain('claude on vertex');
    const errors = jsonLines(await (await openai.files.content(batch.error_file_id!)).text());
    expect(errors.map((l) => [l.custom_id, l.response.status_code])).toEqual([['g3', 400]]);

    const { usage, audit } = await records(batch.id, 4);
    expect(audit.filter((e) => e.type === 'gateway.request').map((e) => e.status).sort()).toEqual([200, 200, 200, 400]);
    // Half the price per million tokens: Gemini 1,000 × 1 + 500 × 4; Claude 2,000 × 1.5 + 100 × 7.5.
    const costs = usage.filter((r) => r.cost_usd !== 0).map((r) => [r.model, r.cost_usd]);
    expect(costs.sort()).toEqual([
      ['claude-vertex', 0.00375],
      ['gemini-batch', 0.003],
      ['gemini-batch', 0.003],
    ]);
  });

  it('sends a Message Batch to Claude on Vertex AI as its params came and answers in Anthropic\'s shape', async () => {
    const created = await anthropic.messages.batches.create({
      requests: [{ custom_id: 'native-vertex', params: { model: 'claude-vertex', max_tokens: 32, messages: [{ role: 'user', content: 'hello' }], a_field_of_tomorrow: { keep: true } } as never }],
    });
    const [job] = await jobsOf(created.id, 1);
    expect(job!.lines[0]!.request).toEqual({ max_tokens: 32, messages: [{ role: 'user', content: 'hello' }], a_field_of_tomorrow: { keep: true }, anthropic_version: 'vertex-2023-10-16' });
    mock.release(job!.name);
    await eventually(async () => {
      const found = await anthropic.messages.batches.retrieve(created.id);
      if (found.processing_status !== 'ended') throw new Error(found.processing_status);
      return found;
    }, 'the message batch to end', 30_000);
    const results = [];
    for await (const result of await anthropic.messages.batches.results(created.id)) results.push(result);
    expect(results[0]).toMatchObject({ custom_id: 'native-vertex', result: { type: 'succeeded', message: { type: 'message', content: [{ type: 'text' }], usage: { input_tokens: 2000, output_tokens: 100 } } } });
  });

  it('cancels the job when the client cancels the batch', async () => {
    const created = await openai.batches.create({ input_file_id: (await uploadLines(openai, [chatLine('x1', 'stop', 'gemini-batch'), chatLine('x2', 'stop', 'gemini-batch')])).id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const [job] = await jobsOf(created.id, 1);
    await openai.batches.cancel(created.id);
    const batch = await batchEnded(openai, created.id);
    expect(batch.status).toBe('cancelled');
    expect(job!.cancelled).toBe(true);
    expect(batch.request_counts).toMatchObject({ total: 2, completed: 0 });
  });
});
