import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness as startControlPlane, type Harness as ControlPlaneHarness } from '../../control-plane/test/harness.js';
import { startWriter, type Writer } from '../../control-plane/src/writer/start-writer.js';
import { TEST_REDIS_URL } from '../../test-support/databases.js';
import { eventually } from '../../test-support/processes.js';
import { freePort } from '../../test-support/services.js';
import { startBedrockBatchMock, type BedrockBatchMock, type MockJob } from '../../test-support/bedrock-batch-mock.js';
import { startProxy, type Proxy } from '../src/proxy.js';
import { batchEnded, batchRecords, jsonLines, uploadLines } from './batch-client.js';

/**
 * Provider-run batches at Bedrock (`batch: native` on a bedrock entry) with the official `openai`
 * SDK, against a mock of Bedrock's batch inference and the S3 it reads and writes (every call's
 * SigV4 signature checked): the admitted lines go up as one S3 object of Converse records, one
 * job runs them, and each line is answered from the job's output at the batch price with one
 * usage record and one audit event; a batch too small for Bedrock's minimum of records is run by
 * the gateway, at the normal price.
 */
const TOKEN = 'bedrock-batches-internal-token-0123456789';
const CREDS = { region: 'us-east-1', accessKeyId: 'AKIDBATCHEXAMPLE0001', secretAccessKey: 'bedrock-batch-secret-access-key-0123456789' };
const ROLE = 'arn:aws:iam::123456789012:role/GatewayBatchRole';
const MODEL = 'anthropic.claude-3-5-haiku-20241022-v1:0';
const MIN = 5;
let cp: ControlPlaneHarness;
let proxy: Proxy;
let writer: Writer;
let mock: BedrockBatchMock;
let openai: OpenAI;
let projectId: string;
let proxyEnv: Record<string, string>;

beforeAll(async () => {
  cp = await startControlPlane('bedrock_batches', { env: { INTERNAL_TOKEN: TOKEN } });
  mock = await startBedrockBatchMock(
    CREDS,
    (record) => {
      const text = JSON.stringify(record.modelInput.messages);
      if (text.includes('refuse me')) return { error: { errorCode: 400, errorMessage: 'Malformed input request: this record is refused' } };
      return {
        modelOutput: {
          output: { message: { role: 'assistant', content: [{ text: `bedrock batched: ${text}` }] } },
          stopReason: 'end_turn',
          usage: { inputTokens: 1000, outputTokens: 500, totalTokens: 1500 },
          metrics: { latencyMs: 12 },
        },
      };
    },
    MIN,
  );
  const dir = mkdtempSync(join(tmpdir(), 'gw-bedrock-batches-'));
  const providers = join(dir, 'providers.yaml');
  writeFileSync(
    providers,
    [
      'providers:',
      '  - name: bedrock-batches',
      '    type: bedrock',
      `    region: ${CREDS.region}`,
      `    base_url: ${mock.baseUrl}`,
      `    batch_url: ${mock.baseUrl}`,
      `    s3_url: ${mock.baseUrl}`,
      `    aws_access_key_id: ${CREDS.accessKeyId}`,
      `    aws_secret_access_key: ${CREDS.secretAccessKey}`,
      '    batch: native',
      `    batch_role_arn: ${ROLE}`,
      '    batch_s3_uri: s3://gateway-batches/jobs',
      `    batch_min_records: "${MIN}"`,
      `    models: [{ id: claude-bedrock, upstream: "${MODEL}", price: { input: 4, output: 20 } }]`,
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
  projectId = (await cp.api<{ id: string }>('POST', '/v1/projects', { token: cp.adminToken, body: { name: 'bedrock batches' } })).body.id;
  const key = (await cp.api<{ key: string }>('POST', `/v1/projects/${projectId}/keys`, { token: cp.adminToken, body: { name: 'batch key' } })).body.key;
  openai = new OpenAI({ apiKey: key, baseURL: `http://127.0.0.1:${proxy.port}/v1`, maxRetries: 0 });
}, 60_000);

afterAll(async () => {
  mock?.release();
  await proxy?.drain();
  await writer?.close();
  await mock?.close();
  await cp?.close();
});

function chatLine(customId: string, text: string, model = 'claude-bedrock'): string {
  return JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/chat/completions', body: { model, messages: [{ role: 'user', content: text }], max_tokens: 64, temperature: 0.3 } });
}

async function create(lines: string[]): Promise<OpenAI.Batch> {
  return openai.batches.create({ input_file_id: (await uploadLines(openai, lines)).id, endpoint: '/v1/chat/completions', completion_window: '24h' });
}

/** The job the gateway made for a batch of ours (its name is made of our batch id). */
function jobOf(batchId: string): Promise<MockJob> {
  const name = batchId.replace(/[^a-zA-Z0-9-]/g, '-');
  return eventually(async () => mock.jobs.find((j) => j.jobName.startsWith(name)) ?? Promise.reject(new Error('no job yet')), 'the batch inference job', 20_000);
}

interface UsageRow {
  cost_usd: number | null;
  provider: string;
  tokens: { input: number; output: number };
}

function records(batchId: string, lines: number) {
  return batchRecords<UsageRow>(cp, projectId, batchId, lines);
}

describe('provider-run batches at Bedrock', () => {
  it('sends the admitted lines as one Converse batch inference job through S3 and answers each from its output at the batch price', async () => {
    const lines = [...['a', 'b', 'c', 'd', 'e'].map((x) => chatLine(`line-${x}`, `question ${x}`)), chatLine('refused', 'refuse me'), chatLine('on-the-gateway', 'here', 'mock-1')];
    const created = await create(lines);
    const job = await jobOf(created.id);
    expect(job).toMatchObject({ modelId: MODEL, roleArn: ROLE, modelInvocationType: 'Converse' });
    expect(job.input).toMatch(/^s3:\/\/gateway-batches\/jobs\/.+\/input\.jsonl$/);
    // Each record the Converse body the runtime would have been sent, under the gateway's own record id.
    expect(job.records.map((r) => r.recordId)).toEqual(['l0', 'l1', 'l2', 'l3', 'l4', 'l5']);
    expect(job.records[0]!.modelInput).toMatchObject({ messages: [{ role: 'user', content: [{ text: 'question a' }] }], inferenceConfig: { maxTokens: 64, temperature: 0.3 } });
    expect((await openai.batches.retrieve(created.id)).status).toBe('in_progress');

    mock.release(job.jobArn);
    const batch = await batchEnded(openai, created.id);
    expect(batch.status).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 7, completed: 6, failed: 1 });
    const output = jsonLines(await (await openai.files.content(batch.output_file_id!)).text());
    expect(output.map((l) => l.custom_id)).toEqual(['line-a', 'line-b', 'line-c', 'line-d', 'line-e', 'on-the-gateway']);
    expect(output[0]!.response.body.choices[0].message.content).toContain('question a');
    expect(output[0]!.response.body.model).toBe('claude-bedrock');
    const errors = jsonLines(await (await openai.files.content(batch.error_file_id!)).text());
    expect(errors.map((l) => [l.custom_id, l.response.status_code])).toEqual([['refused', 400]]);
    expect(errors[0]!.response.body.error.message).toContain('this record is refused');

    const { usage, audit } = await records(batch.id, 7);
    expect(audit.filter((e) => e.type === 'gateway.request').map((e) => e.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 400]);
    const native = usage.filter((r) => r.provider === 'bedrock-batches' && r.tokens.input > 0);
    expect(native).toHaveLength(5);
    // Half of { input: 4, output: 20 } per million tokens: 1,000 × 2 + 500 × 10.
    for (const record of native) expect(record.cost_usd).toBeCloseTo(0.007, 10);
    // Nothing went to the runtime: the job ran every line for Bedrock.
    expect(mock.converse).toHaveLength(0);
  });

  it('runs a batch with fewer lines than Bedrock takes on the gateway, at the normal price', async () => {
    const created = await create([chatLine('s1', 'small one'), chatLine('s2', 'small two')]);
    const batch = await batchEnded(openai, created.id);
    expect(batch.status).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
    expect(mock.jobs.filter((j) => j.jobName.startsWith(created.id.replace(/[^a-zA-Z0-9-]/g, '-')))).toHaveLength(0);
    expect(mock.converse.filter((c) => JSON.stringify(c.body).includes('small'))).toHaveLength(2);
    const { usage } = await records(batch.id, 2);
    // { input: 4, output: 20 } per million tokens: 1,000 × 4 + 500 × 20.
    for (const record of usage) expect(record.cost_usd).toBeCloseTo(0.014, 10);
  });

  it("runs Bedrock's share on the gateway when the batch's other lines leave it under the minimum", async () => {
    const lines = [chatLine('b1', 'share one'), chatLine('b2', 'share two'), ...[1, 2, 3, 4].map((n) => chatLine(`m${n}`, 'elsewhere', 'mock-1'))];
    const created = await create(lines);
    const batch = await batchEnded(openai, created.id);
    expect(batch.request_counts).toEqual({ total: 6, completed: 6, failed: 0 });
    expect(mock.jobs.filter((j) => j.jobName.startsWith(created.id.replace(/[^a-zA-Z0-9-]/g, '-')))).toHaveLength(0);
    expect(mock.converse.filter((c) => JSON.stringify(c.body).includes('share'))).toHaveLength(2);
    const { usage } = await records(batch.id, 6);
    expect(usage.filter((r) => r.provider === 'bedrock-batches')).toHaveLength(2);
  });

  it('stops the job when the client cancels the batch', async () => {
    const created = await create(['1', '2', '3', '4', '5'].map((n) => chatLine(`c${n}`, `cancel ${n}`)));
    const job = await jobOf(created.id);
    await openai.batches.cancel(created.id);
    const batch = await batchEnded(openai, created.id);
    expect(batch.status).toBe('cancelled');
    expect(job.stopped).toBe(true);
    expect(batch.request_counts).toMatchObject({ total: 5, completed: 0 });
  });

  it('is collected by another proxy when the one that made the job stopped: its output found from what was recorded', async () => {
    const created = await create(['1', '2', '3', '4', '5'].map((n) => chatLine(`r${n}`, `restart ${n}`)));
    const job = await jobOf(created.id);
    const next = await startProxy(proxyEnv);
    await proxy.drain();
    proxy = next;
    openai = new OpenAI({ apiKey: openai.apiKey, baseURL: `http://127.0.0.1:${proxy.port}/v1`, maxRetries: 0 });
    mock.release(job.jobArn);
    const batch = await batchEnded(openai, created.id);
    expect(batch.request_counts).toEqual({ total: 5, completed: 5, failed: 0 });
    expect(mock.jobs.filter((j) => j.jobName.startsWith(created.id.replace(/[^a-zA-Z0-9-]/g, '-')))).toHaveLength(1);
    const { usage } = await records(batch.id, 5);
    expect(usage).toHaveLength(5);
  });
});
