import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerResponse } from 'node:http';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness as startControlPlane, type Harness as ControlPlaneHarness } from '../../control-plane/test/harness.js';
import { startWriter, type Writer } from '../../control-plane/src/writer/start-writer.js';
import { TEST_REDIS_URL } from '../../test-support/databases.js';
import { eventually } from '../../test-support/processes.js';
import { freePort } from '../../test-support/services.js';
import { startWireMock, type RunningWireMock, type WireRequest } from '../../test-support/wire-mock.js';
import { answerChat } from './chat-wire-answer.js';
import { startProxy, type Proxy } from '../src/proxy.js';
import { batchEnded, jsonLines, uploadLines } from './batch-client.js';

/**
 * Files and batches with the official SDKs, unmodified: OpenAI's Files and Batch APIs and
 * Anthropic's Message Batches, run by the gateway itself through each line's own endpoint — the
 * key's allow-list, quota and records apply per line, with `batch_id` on its usage record and
 * audit event — against a mock provider; another project's key finds nothing; a bad line is
 * refused at upload naming it; cancelling and deleting the key stop a batch whose lines are held
 * at the provider.
 */
const TOKEN = 'batches-internal-token-0123456789abcdef';
let cp: ControlPlaneHarness;
let proxy: Proxy;
let writer: Writer;
let held: RunningWireMock;
let openai: OpenAI;
let anthropic: Anthropic;
let projectId: string;
let otherKey: string;
let key: string;

/** Requests held at the slow provider until released (a batch still running when it is cancelled). */
let release: (() => void)[] = [];
const heldSeen: WireRequest[] = [];

function heldAnswer(req: WireRequest, res: ServerResponse): void {
  heldSeen.push(req);
  release.push(() => {
    // A line the gateway stopped has closed its connection.
    if (!res.destroyed && !res.headersSent) answerChat(req, res, { text: 'finally' }, { prompt_tokens: 5, completion_tokens: 2 });
  });
}

async function newKey(project: string): Promise<string> {
  return (await cp.api<{ key: string }>('POST', `/v1/projects/${project}/keys`, { token: cp.adminToken, body: { name: 'batch key' } })).body.key;
}

beforeAll(async () => {
  cp = await startControlPlane('batches', { env: { INTERNAL_TOKEN: TOKEN } });
  held = await startWireMock(heldAnswer);
  const dir = mkdtempSync(join(tmpdir(), 'gw-batches-'));
  const providers = join(dir, 'providers.yaml');
  writeFileSync(
    providers,
    [
      'providers:',
      '  - name: offline',
      '    type: mock',
      '    models: [mock-1, mock-2]',
      '  - name: slow',
      '    type: openai',
      `    base_url: ${held.baseUrl}/v1`,
      '    api_key: sk-held-provider-secret-0123456789',
      '    models: [held-1]',
      '',
    ].join('\n'),
  );
  const env = { REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: cp.prefix, LOG_LEVEL: 'silent' };
  proxy = await startProxy({ ...env, PROXY_PORT: '0', METRICS_PORT: '0', PROXY_HOST: '127.0.0.1', GATEWAY_CONFIG: providers, CONTROL_PLANE_URL: cp.base, INTERNAL_TOKEN: TOKEN, BATCH_LINE_CONCURRENCY: '4' });
  writer = await startWriter({ ...env, DATABASE_URL: cp.db.url, WRITER_PORT: String(await freePort()), RECORD_FLUSH_MS: '50' });
  projectId = (await cp.api<{ id: string }>('POST', '/v1/projects', { token: cp.adminToken, body: { name: 'batches' } })).body.id;
  const other = (await cp.api<{ id: string }>('POST', '/v1/projects', { token: cp.adminToken, body: { name: 'batches elsewhere' } })).body.id;
  key = await newKey(projectId);
  otherKey = await newKey(other);
  openai = new OpenAI({ apiKey: key, baseURL: `http://127.0.0.1:${proxy.port}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: key, baseURL: `http://127.0.0.1:${proxy.port}`, maxRetries: 0 });
}, 60_000);

afterAll(async () => {
  for (const go of release) go();
  await proxy?.drain();
  await writer?.close();
  await held?.close();
  await cp?.close();
});

function chatLine(customId: string, text: string, model = 'mock-1'): string {
  return JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/chat/completions', body: { model, messages: [{ role: 'user', content: text }], max_tokens: 50 } });
}

async function upload(lines: string[], client = openai): Promise<OpenAI.FileObject> {
  return uploadLines(client, lines);
}

async function ended(id: string, client = openai): Promise<OpenAI.Batch> {
  return batchEnded(client, id);
}

describe('OpenAI Files and Batch APIs', () => {
  it('uploads a file, runs its lines and serves the output and error files', async () => {
    const lines = [chatLine('first', 'hello one'), chatLine('second', 'hello two'), chatLine('third', 'no such model', 'not-served-9')];
    const file = await upload(lines);
    expect(file).toMatchObject({ object: 'file', purpose: 'batch', status: 'processed', filename: 'batch.jsonl' });
    expect((await openai.files.retrieve(file.id)).id).toBe(file.id);
    expect(await (await openai.files.content(file.id)).text()).toBe(`${lines.join('\n')}\n`);

    const created = await openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { job: 'nightly' } });
    expect(created).toMatchObject({ object: 'batch', endpoint: '/v1/chat/completions', input_file_id: file.id, metadata: { job: 'nightly' } });
    const batch = await ended(created.id);
    expect(batch.status).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 3, completed: 2, failed: 1 });

    const output = jsonLines(await (await openai.files.content(batch.output_file_id!)).text());
    expect(output.map((line) => line.custom_id)).toEqual(['first', 'second']);
    expect(output[0]!.response.status_code).toBe(200);
    expect(output[0]!.response.body.choices[0].message.content).toContain('hello one');
    const errors = jsonLines(await (await openai.files.content(batch.error_file_id!)).text());
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ custom_id: 'third', response: { status_code: 404, body: { error: { code: 'MODEL_NOT_FOUND' } } } });

    // One usage record per line that reached a provider, one audit event per line, each naming the batch.
    const usage = await eventually(async () => {
      const res = await cp.api<{ data: { batch_id: string; model: string }[] }>('GET', `/v1/usage?project_id=${projectId}&batch_id=${batch.id}`, { token: cp.adminToken });
      if (res.body.data.length < 2) throw new Error('records not landed yet');
      return res.body.data;
    }, 'usage records', 20_000);
    expect(usage).toHaveLength(2);
    expect(usage.every((record) => record.batch_id === batch.id)).toBe(true);
    const audit = await eventually(async () => {
      const res = await cp.api<{ data: { batch_id: string; status: number; type: string; outcome: string; target: unknown }[] }>('GET', `/v1/audit?project_id=${projectId}&batch_id=${batch.id}`, { token: cp.adminToken });
      if (res.body.data.filter((event) => event.type === 'gateway.request').length < 3) throw new Error('events not landed yet');
      return res.body.data;
    }, 'audit events', 20_000);
    expect(audit.filter((event) => event.type === 'gateway.request').map((event) => event.status).sort()).toEqual([200, 200, 404]);
    // The batch itself: made and ended, with the batch as target.
    expect(audit.filter((event) => event.type !== 'gateway.request').map((event) => [event.type, event.outcome]).sort()).toEqual([
      ['batch.created', 'success'],
      ['batch.ended', 'success'],
    ]);
    expect(audit.find((event) => event.type === 'batch.created')?.target).toEqual({ type: 'batch', id: batch.id });

    const listed = await openai.batches.list();
    expect(listed.data.map((b) => b.id)).toContain(batch.id);
  });

  it('refuses a bad line at upload, naming it', async () => {
    const res = await upload([chatLine('a', 'fine'), '{"custom_id": "b", "method": "POST"']).catch((err: unknown) => err);
    expect(res).toBeInstanceOf(OpenAI.BadRequestError);
    expect((res as InstanceType<typeof OpenAI.BadRequestError>).message).toContain('Line 2');
    const repeated = await upload([chatLine('same', 'one'), chatLine('same', 'two')]).catch((err: unknown) => err);
    expect((repeated as Error).message).toContain('Line 2');
  });

  it('refuses a batch whose lines call another endpoint, naming the line', async () => {
    const file = await upload([chatLine('a', 'fine'), JSON.stringify({ custom_id: 'e', method: 'POST', url: '/v1/embeddings', body: { model: 'mock-1', input: 'x' } })]);
    const res = await openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }).catch((err: unknown) => err);
    expect(res).toBeInstanceOf(OpenAI.BadRequestError);
    expect((res as Error).message).toContain('Line 2');
  });

  it('shows another project nothing', async () => {
    const file = await upload([chatLine('mine', 'private')]);
    const batch = await openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const stranger = new OpenAI({ apiKey: otherKey, baseURL: `http://127.0.0.1:${proxy.port}/v1`, maxRetries: 0 });
    await expect(stranger.files.retrieve(file.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(stranger.files.content(file.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(stranger.batches.retrieve(batch.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(stranger.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect((await stranger.files.list()).data.map((f) => f.id)).not.toContain(file.id);
    await ended(batch.id);
  });

  it('deletes a file', async () => {
    const file = await upload([chatLine('gone', 'soon')]);
    expect(await openai.files.delete(file.id)).toMatchObject({ id: file.id, deleted: true });
    await expect(openai.files.retrieve(file.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('cancels a batch: the lines not answered are not run', async () => {
    release = [];
    const file = await upload(Array.from({ length: 12 }, (_, i) => chatLine(`slow-${i}`, `wait ${i}`, 'held-1')));
    const batch = await openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await eventually(async () => {
      return release.length >= 4;
    }, 'lines held at the provider', 20_000);
    const cancelling = await openai.batches.cancel(batch.id);
    expect(['cancelling', 'cancelled']).toContain(cancelling.status);
    for (const go of release) go();
    const done = await ended(batch.id);
    expect(done.status).toBe('cancelled');
    expect(done.request_counts!.completed + done.request_counts!.failed).toBeLessThan(12);
    const events = await cp.api<{ data: { type: string; outcome: string }[] }>('GET', `/v1/audit?project_id=${projectId}&batch_id=${batch.id}&type=batch.cancelled`, { token: cp.adminToken });
    expect(events.body.data).toHaveLength(1);
  });

  it('expires a batch whose completion window passed: the lines not run end batch_expired', async () => {
    release = [];
    const file = await upload(Array.from({ length: 10 }, (_, i) => chatLine(`late-${i}`, `wait ${i}`, 'held-1')));
    const batch = await openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await eventually(async () => release.length >= 4, 'lines held at the provider', 20_000);
    // The window's end brought forward instead of waiting 24 hours.
    await cp.sql`update batches set expires_at = now() where id = ${batch.id}`;
    const done = await ended(batch.id);
    for (const go of release) go();
    expect(done.status).toBe('expired');
    expect(done.expired_at).toBeGreaterThan(0);
    expect(done.request_counts).toMatchObject({ total: 10, completed: 0, failed: 10 });
    const errors = jsonLines(await (await openai.files.content(done.error_file_id!)).text());
    expect(errors).toHaveLength(10);
    expect(errors.every((line) => line.response === null && line.error.code === 'batch_expired')).toBe(true);
    const events = await cp.api<{ data: { type: string; outcome: string }[] }>('GET', `/v1/audit?project_id=${projectId}&batch_id=${batch.id}&type=batch.ended`, { token: cp.adminToken });
    expect(events.body.data.map((e) => e.outcome)).toEqual(['error']);
  });

  it('stops the batches of a deleted key: lines not answered end UNAUTHORIZED', async () => {
    release = [];
    const doomed = await newKey(projectId);
    const client = new OpenAI({ apiKey: doomed, baseURL: `http://127.0.0.1:${proxy.port}/v1`, maxRetries: 0 });
    const file = await upload(Array.from({ length: 10 }, (_, i) => chatLine(`k-${i}`, `wait ${i}`, 'held-1')), client);
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await eventually(async () => {
      return release.length >= 4;
    }, 'lines held at the provider', 20_000);
    const keys = await cp.api<{ data: { id: string; prefix: string }[] }>('GET', `/v1/projects/${projectId}/keys`, { token: cp.adminToken });
    const keyId = keys.body.data.find((k) => doomed.startsWith(k.prefix))!.id;
    expect((await cp.api('DELETE', `/v1/projects/${projectId}/keys/${keyId}`, { token: cp.adminToken })).status).toBe(204);
    const done = await ended(batch.id, openai);
    expect(done.status).toBe('cancelled');
    expect(done.request_counts).toMatchObject({ total: 10, completed: 0, failed: 10 });
    const errors = jsonLines(await (await openai.files.content(done.error_file_id!)).text());
    expect(errors).toHaveLength(10);
    expect(errors.every((line) => line.response.status_code === 401)).toBe(true);
    for (const go of release) go();
  });
});

describe("Anthropic's Message Batches", () => {
  it('creates a batch, runs it and serves its results', async () => {
    const created = await anthropic.messages.batches.create({
      requests: [
        { custom_id: 'one', params: { model: 'mock-1', max_tokens: 40, messages: [{ role: 'user', content: 'hi from one' }] } },
        { custom_id: 'two', params: { model: 'not-served-9', max_tokens: 40, messages: [{ role: 'user', content: 'nobody' }] } },
      ],
    });
    expect(created).toMatchObject({ type: 'message_batch', processing_status: 'in_progress' });
    const batch = await eventually(async () => {
      const found = await anthropic.messages.batches.retrieve(created.id);
      if (found.processing_status !== 'ended') throw new Error('still running');
      return found;
    }, 'the message batch to end', 30_000);
    expect(batch.request_counts).toMatchObject({ succeeded: 1, errored: 1, processing: 0 });
    const results = [];
    for await (const result of await anthropic.messages.batches.results(batch.id)) results.push(result);
    expect(results.map((r) => [r.custom_id, r.result.type])).toEqual([
      ['one', 'succeeded'],
      ['two', 'errored'],
    ]);
    const first = results[0]!.result as Anthropic.Messages.MessageBatchSucceededResult;
    expect(first.message.content[0]).toMatchObject({ type: 'text' });
    expect((await anthropic.messages.batches.list()).data.map((b) => b.id)).toContain(batch.id);
  });

  it('ends a batch past its window with its requests expired', async () => {
    release = [];
    const held = await anthropic.messages.batches.create({
      requests: Array.from({ length: 3 }, (_, i) => ({ custom_id: `late-${i}`, params: { model: 'held-1', max_tokens: 5, messages: [{ role: 'user' as const, content: `wait ${i}` }] } })),
    });
    await eventually(async () => release.length >= 3, 'requests held at the provider', 20_000);
    await cp.sql`update batches set expires_at = now() where id = ${held.id}`;
    const batch = await eventually(async () => {
      const found = await anthropic.messages.batches.retrieve(held.id);
      if (found.processing_status !== 'ended') throw new Error('still running');
      return found;
    }, 'the message batch to end', 30_000);
    for (const go of release) go();
    expect(batch.request_counts).toMatchObject({ succeeded: 0, errored: 0, expired: 3, canceled: 0, processing: 0 });
    const results = [];
    for await (const result of await anthropic.messages.batches.results(batch.id)) results.push(result);
    expect(results.map((r) => r.result.type)).toEqual(['expired', 'expired', 'expired']);
  });

  it('deletes an ended batch, and refuses to delete a running one', async () => {
    release = [];
    const held = await anthropic.messages.batches.create({ requests: [{ custom_id: 'held', params: { model: 'held-1', max_tokens: 5, messages: [{ role: 'user', content: 'wait' }] } }] });
    const refused = await anthropic.messages.batches.delete(held.id).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
    expect((refused as Error).message).toContain('cancel it first');
    await anthropic.messages.batches.cancel(held.id);
    for (const go of release) go();
    await eventually(async () => (await anthropic.messages.batches.retrieve(held.id)).processing_status === 'ended', 'the cancelled batch to end', 30_000);

    expect(await anthropic.messages.batches.delete(held.id)).toEqual({ id: held.id, type: 'message_batch_deleted' });
    expect(await anthropic.messages.batches.retrieve(held.id).catch((err: unknown) => err)).toBeInstanceOf(Anthropic.NotFoundError);
    expect(await anthropic.messages.batches.delete(held.id).catch((err: unknown) => err)).toBeInstanceOf(Anthropic.NotFoundError);
    const events = await cp.api<{ data: { type: string }[] }>('GET', `/v1/audit?project_id=${projectId}&batch_id=${held.id}&type=batch.deleted`, { token: cp.adminToken });
    expect(events.body.data).toHaveLength(1);
  });

  it('refuses a request without a model, naming its index', async () => {
    const res = await anthropic.messages.batches.create({ requests: [{ custom_id: 'ok', params: { model: 'mock-1', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] } }, { custom_id: 'bad', params: { max_tokens: 5, messages: [] } as never }] }).catch((err: unknown) => err);
    expect(res).toBeInstanceOf(Anthropic.BadRequestError);
    expect((res as Error).message).toContain('requests.1');
  });
});
