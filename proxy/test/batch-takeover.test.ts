import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerResponse } from 'node:http';
import { Queue } from 'bullmq';
import OpenAI, { toFile } from 'openai';
import { RedisKeys } from '@gateway/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness as startControlPlane, type Harness as ControlPlaneHarness } from '../../control-plane/test/harness.js';
import { startWriter, type Writer } from '../../control-plane/src/writer/start-writer.js';
import { TEST_REDIS_URL } from '../../test-support/databases.js';
import { eventually, spawnNode, waitForOutput, type Child } from '../../test-support/processes.js';
import { freePort } from '../../test-support/services.js';
import { startWireMock, type RunningWireMock, type WireRequest } from '../../test-support/wire-mock.js';
import { answerChat } from './chat-wire-answer.js';
import { startProxy, type Proxy } from '../src/proxy.js';

/**
 * A gateway-run batch survives the proxy running it: the proxy is killed (SIGKILL, nothing
 * flushed) with lines in flight and answers not yet stored, another proxy takes the batch over
 * once the lock lapses, and every line is answered exactly once — one output line per custom id,
 * and one usage record per line however many times it ran.
 */
const TOKEN = 'batch-takeover-internal-token-0123456789';
const LINES = 40;
let cp: ControlPlaneHarness;
let writer: Writer;
let mock: RunningWireMock;
let first: Child | null = null;
let second: Proxy | null = null;
let providers: string;
/** The first few requests are answered at once; then, until set, the provider holds every request (the first proxy dies with them in flight). */
let answering = false;
let answeredAtOnce = 0;
const held: (() => void)[] = [];

function answer(req: WireRequest, res: ServerResponse): void {
  const go = () => {
    if (!res.destroyed && !res.headersSent) answerChat(req, res, { text: `answer to ${JSON.stringify(req.body.messages)}` }, { prompt_tokens: 4, completion_tokens: 2 });
  };
  if (answering || answeredAtOnce++ < 5) go();
  else held.push(go);
}

beforeAll(async () => {
  cp = await startControlPlane('batch-takeover', { env: { INTERNAL_TOKEN: TOKEN } });
  mock = await startWireMock(answer);
  const dir = mkdtempSync(join(tmpdir(), 'gw-batch-takeover-'));
  providers = join(dir, 'providers.yaml');
  writeFileSync(providers, `providers:\n  - name: upstream\n    type: openai\n    base_url: ${mock.baseUrl}/v1\n    api_key: sk-takeover-provider-secret-0123456789\n    models: [chat-1]\n`);
  writer = await startWriter({ REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: cp.prefix, LOG_LEVEL: 'silent', DATABASE_URL: cp.db.url, WRITER_PORT: String(await freePort()), RECORD_FLUSH_MS: '50' });
}, 60_000);

afterAll(async () => {
  answering = true;
  for (const go of held) go();
  await first?.kill('SIGKILL');
  await second?.drain();
  await writer?.close();
  await mock?.close();
  await cp?.close();
});

const env = () => ({ REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: cp.prefix, PROXY_PORT: '0', METRICS_PORT: '0', PROXY_HOST: '127.0.0.1', GATEWAY_CONFIG: providers, CONTROL_PLANE_URL: cp.base, INTERNAL_TOKEN: TOKEN, BATCH_LOCK_MS: '1500', BATCH_LINE_CONCURRENCY: '8' });

describe('a batch whose proxy dies', () => {
  it('is taken over and every line is answered once', async () => {
    first = spawnNode('proxy/dist/main.js', [], { ...env(), PROXY_WORKERS: '1', LOG_LEVEL: 'info' });
    const [, port] = await waitForOutput(first, /"port":(\d+)[^\n]*"msg":"proxy listening"/, 30_000);
    const projectId = (await cp.api<{ id: string }>('POST', '/v1/projects', { token: cp.adminToken, body: { name: 'takeover' } })).body.id;
    const key = (await cp.api<{ key: string }>('POST', `/v1/projects/${projectId}/keys`, { token: cp.adminToken, body: { name: 'k' } })).body.key;
    const client = new OpenAI({ apiKey: key, baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
    const lines = Array.from({ length: LINES }, (_, i) => JSON.stringify({ custom_id: `line-${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'chat-1', messages: [{ role: 'user', content: `question ${i}` }] } }));
    const file = await client.files.create({ file: await toFile(Buffer.from(lines.join('\n')), 'in.jsonl'), purpose: 'batch' });
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });

    // The first proxy answers a few lines (kept in memory, not yet stored), then holds eight more at the provider and dies.
    await eventually(() => held.length >= 8, 'lines in flight at the provider', 20_000);
    await first.kill('SIGKILL');
    first = null;
    answering = true;
    for (const go of held.splice(0)) go();

    second = await startProxy({ ...env(), LOG_LEVEL: 'silent' });
    const other = new OpenAI({ apiKey: key, baseURL: `http://127.0.0.1:${second.port}/v1`, maxRetries: 0 });
    const done = await eventually(async () => {
      const found = await other.batches.retrieve(batch.id);
      return found.status === 'completed' ? found : null;
    }, 'the batch to complete on the second proxy', 60_000);
    expect(done.request_counts).toEqual({ total: LINES, completed: LINES, failed: 0 });
    const output = (await (await other.files.content(done.output_file_id!)).text()).split('\n').filter((line) => line !== '');
    const ids = output.map((line) => (JSON.parse(line) as { custom_id: string }).custom_id);
    expect(ids).toHaveLength(LINES);
    expect(new Set(ids).size).toBe(LINES);

    // Every record either proxy made is in PostgreSQL once the second has flushed and the writer has taken every job.
    await second.drain();
    second = null;
    const records = new Queue(new RedisKeys(cp.prefix).recordsQueue, { connection: { url: TEST_REDIS_URL }, prefix: new RedisKeys(cp.prefix).bullPrefix });
    try {
      await eventually(async () => {
        const counts = await records.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
        return Object.values(counts).every((n) => n === 0);
      }, 'the records queue to empty', 30_000);
    } finally {
      await records.close();
    }
    const usage = await cp.api<{ data: { id: string }[] }>('GET', `/v1/usage?project_id=${projectId}&batch_id=${batch.id}&limit=1000`, { token: cp.adminToken });
    expect(usage.body.data).toHaveLength(LINES);
  });
});
