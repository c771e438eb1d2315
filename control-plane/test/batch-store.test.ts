import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BatchRow, ClaimedLine, FileRow, StoredLineResult } from '@gateway/shared';
import { startHarness, type Harness } from './harness.js';

/**
 * Files and batches (migration 0022) through the internal routes the proxies use: a file uploaded
 * in pages of lines, completed, listed, read back streamed and deleted; a batch made on it, its
 * lines claimed (the first claim's moment kept for good), answered (the first answer kept), and
 * ended with its output and error files; a deleted key's batches cancelled. Each project sees its
 * own files and batches only.
 */
const TOKEN = 'internal-token-for-the-batch-store-test';
let h: Harness;

beforeAll(async () => {
  h = await startHarness('batch-store', { env: { INTERNAL_TOKEN: TOKEN } });
});
afterAll(async () => h?.close());

const internal = (method: string, path: string, body?: unknown, token: string | null = TOKEN) =>
  h.api(method, path, { token, ...(body === undefined ? {} : { body }) });

let projects = 0;
async function newProject(): Promise<{ project: string; key: string }> {
  const created = await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: `batch-store ${++projects}` } });
  expect(created.status, created.text).toBe(201);
  const project = created.body.id as string;
  const key = await h.api('POST', `/v1/projects/${project}/keys`, { token: h.adminToken, body: { name: 'batch' } });
  expect(key.status, key.text).toBe(201);
  return { project, key: key.body.id as string };
}

function chatLine(i: number, url = '/v1/chat/completions'): string {
  return JSON.stringify({ custom_id: `req-${i}`, method: 'POST', url, body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `Hello ${i} — ünïcode` }] } });
}

/** Opens a file, sends its lines `pageSize` at a time, and completes it. */
async function upload(
  project: string,
  key: string,
  lines: string[],
  opts: { purpose?: 'batch' | 'batch_requests'; pageSize?: number; endpoints?: Record<string, number> } = {},
): Promise<FileRow> {
  const opened = await internal('POST', '/internal/v1/files', { v: 1, project_id: project, key_id: key, purpose: opts.purpose ?? 'batch', filename: 'requests.jsonl' });
  expect(opened.status, opened.text).toBe(201);
  const id = opened.body.id as string;
  const pageSize = opts.pageSize ?? 1000;
  for (let first = 0; first < lines.length; first += pageSize) {
    const sent = await internal('POST', `/internal/v1/files/${id}/lines`, { v: 1, project_id: project, first_line: first, lines: lines.slice(first, first + pageSize) });
    expect(sent.status, sent.text).toBe(204);
  }
  const bytes = Buffer.byteLength(lines.map((l) => `${l}\n`).join(''));
  const done = await internal('POST', `/internal/v1/files/${id}/complete`, {
    v: 1,
    project_id: project,
    bytes,
    line_count: lines.length,
    endpoints: opts.endpoints ?? { '/v1/chat/completions': 0 },
  });
  expect(done.status, done.text).toBe(200);
  return done.body as FileRow;
}

async function newBatch(project: string, key: string, fileId: string, extra: Record<string, unknown> = {}) {
  return internal('POST', '/internal/v1/batches', {
    v: 1,
    project_id: project,
    key_id: key,
    api: 'openai',
    endpoint: '/v1/chat/completions',
    input_file_id: fileId,
    completion_window: '24h',
    metadata: null,
    ...extra,
  });
}

async function batchOf(lineCount: number): Promise<{ project: string; key: string; file: FileRow; batch: BatchRow; lines: string[] }> {
  const { project, key } = await newProject();
  const lines = Array.from({ length: lineCount }, (_, i) => chatLine(i));
  const file = await upload(project, key, lines);
  const created = await newBatch(project, key, file.id);
  expect(created.status, created.text).toBe(201);
  return { project, key, file, batch: created.body as BatchRow, lines };
}

const claim = async (batchId: string, after: number, limit: number): Promise<ClaimedLine[]> => {
  const res = await internal('POST', `/internal/v1/batches/${batchId}/claim`, { v: 1, after, limit });
  expect(res.status, res.text).toBe(200);
  return res.body.lines as ClaimedLine[];
};

const answer = (line_no: number, status_code = 200, body: unknown = { id: `chatcmpl-${line_no}`, object: 'chat.completion', choices: [{ message: { role: 'assistant', content: `Hi ${line_no}` } }] }) => ({
  line_no,
  custom_id: `req-${line_no}`,
  status_code,
  request_id: `req_${line_no}`,
  body,
});

const postResults = (batchId: string, results: unknown[]) => internal('POST', `/internal/v1/batches/${batchId}/results`, { v: 1, results });
const finish = (batchId: string, body: Record<string, unknown>) => internal('POST', `/internal/v1/batches/${batchId}/finish`, { v: 1, reason: null, unanswered: null, ...body });

function jsonLines<T>(text: string): T[] {
  expect(text === '' || text.endsWith('\n')).toBe(true);
  return text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as T);
}

describe('the internal file routes', () => {
  it('take a file in pages of lines, list it, answer it and stream its content back as sent', async () => {
    const { project, key } = await newProject();
    const lines = Array.from({ length: 2500 }, (_, i) => chatLine(i));
    const opened = await internal('POST', '/internal/v1/files', { v: 1, project_id: project, key_id: key, purpose: 'batch', filename: 'requests.jsonl' });
    expect(opened.status, opened.text).toBe(201);
    const file = opened.body as FileRow;
    expect(file).toEqual({
      id: expect.stringMatching(/^file-[A-Za-z0-9]{24}$/),
      project_id: project,
      purpose: 'batch',
      filename: 'requests.jsonl',
      bytes: 0,
      line_count: 0,
      status: 'uploading',
      batch_id: null,
      created_at: expect.any(Number),
      expires_at: null,
    });
    expect(Math.abs(file.created_at - Date.now() / 1000)).toBeLessThan(60);

    // Uploading: neither listed nor readable.
    expect((await internal('GET', `/internal/v1/files/${file.id}?project_id=${project}`)).status).toBe(404);
    expect((await internal('GET', `/internal/v1/files/${file.id}/content?project_id=${project}`)).status).toBe(404);
    expect((await internal('GET', `/internal/v1/files?project_id=${project}`)).body).toEqual({ data: [], has_more: false });

    const page = (first: number, count: number) => ({ v: 1, project_id: project, first_line: first, lines: lines.slice(first, first + count) });
    for (const [first, count] of [
      [0, 1000],
      [1000, 1000],
      [2000, 500],
    ] as const) {
      expect((await internal('POST', `/internal/v1/files/${file.id}/lines`, page(first, count))).status).toBe(204);
    }
    // A page sent again, with other text: the first text stays.
    const again = { ...page(1000, 1000), lines: lines.slice(1000, 2000).map(() => '{"custom_id":"changed"}') };
    expect((await internal('POST', `/internal/v1/files/${file.id}/lines`, again)).status).toBe(204);
    const [{ n }] = (await h.sql`select count(*)::int as n from batch_file_lines where file_id = ${file.id}`) as unknown as [{ n: number }];
    expect(n).toBe(2500);

    // Not the project's file: as absent.
    const other = await newProject();
    expect((await internal('POST', `/internal/v1/files/${file.id}/lines`, { ...page(0, 1), project_id: other.project })).status).toBe(404);

    const bytes = Buffer.byteLength(lines.map((l) => `${l}\n`).join(''));
    const done = await internal('POST', `/internal/v1/files/${file.id}/complete`, { v: 1, project_id: project, bytes, line_count: 2500, endpoints: { '/v1/chat/completions': 0 } });
    expect(done.status, done.text).toBe(200);
    expect(done.body).toEqual({ ...file, bytes, line_count: 2500, status: 'processed' });
    // Completed again (a retry): answered as it is.
    expect((await internal('POST', `/internal/v1/files/${file.id}/complete`, { v: 1, project_id: project, bytes, line_count: 2500, endpoints: {} })).body).toEqual(done.body);
    // No more lines once completed.
    expect((await internal('POST', `/internal/v1/files/${file.id}/lines`, page(2500, 1))).status).toBe(404);

    const got = await internal('GET', `/internal/v1/files/${file.id}?project_id=${project}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(done.body);
    const listed = await internal('GET', `/internal/v1/files?project_id=${project}`);
    expect(listed.body).toEqual({ data: [done.body], has_more: false });

    const content = await fetch(`${h.base}/internal/v1/files/${file.id}/content?project_id=${project}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(content.status).toBe(200);
    expect(content.headers.get('content-type')).toBe('application/jsonl');
    const body = Buffer.from(await content.arrayBuffer());
    expect(body.equals(Buffer.from(lines.map((l) => `${l}\n`).join('')))).toBe(true);
    expect(body.length).toBe(bytes);

    for (const path of [`/internal/v1/files/${file.id}?project_id=${other.project}`, `/internal/v1/files/${file.id}/content?project_id=${other.project}`]) {
      const res = await internal('GET', path);
      expect(res.status, path).toBe(404);
      expect(res.body.error, path).toMatchObject({ code: 'NOT_FOUND', param: 'file_id' });
    }
    expect((await internal('DELETE', `/internal/v1/files/${file.id}?project_id=${other.project}`)).status).toBe(404);
    expect((await internal('GET', `/internal/v1/files?project_id=${other.project}`)).body.data).toEqual([]);
    expect((await internal('GET', `/internal/v1/files/file-neverMadeNeverMadeNever?project_id=${project}`)).status).toBe(404);
    expect((await internal('GET', `/internal/v1/files/nonsense?project_id=${project}`)).status).toBe(404);

    const deleted = await internal('DELETE', `/internal/v1/files/${file.id}?project_id=${project}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ id: file.id, deleted: true });
    expect((await internal('GET', `/internal/v1/files/${file.id}?project_id=${project}`)).status).toBe(404);
    expect((await internal('GET', `/internal/v1/files/${file.id}/content?project_id=${project}`)).status).toBe(404);
    expect((await internal('GET', `/internal/v1/files?project_id=${project}`)).body.data).toEqual([]);
    expect((await internal('DELETE', `/internal/v1/files/${file.id}?project_id=${project}`)).status).toBe(404);
  });

  it('refuse to complete a file whose lines did not all arrive, and abort an upload by deleting it', async () => {
    const { project, key } = await newProject();
    const opened = await internal('POST', '/internal/v1/files', { v: 1, project_id: project, key_id: key, purpose: 'batch', filename: 'gaps.jsonl' });
    const id = opened.body.id as string;
    const lines = [chatLine(0), chatLine(1), chatLine(2)];
    expect((await internal('POST', `/internal/v1/files/${id}/lines`, { v: 1, project_id: project, first_line: 0, lines: lines.slice(0, 1) })).status).toBe(204);
    expect((await internal('POST', `/internal/v1/files/${id}/lines`, { v: 1, project_id: project, first_line: 2, lines: lines.slice(2) })).status).toBe(204);
    const complete = (line_count: number) => internal('POST', `/internal/v1/files/${id}/complete`, { v: 1, project_id: project, bytes: 10, line_count, endpoints: {} });
    for (const count of [3, 2]) {
      const res = await complete(count);
      expect(res.status, String(count)).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_REQUEST', param: 'input_file_id', message: 'The input file cannot be used for a batch: its lines did not all arrive.' });
    }
    expect((await internal('POST', `/internal/v1/files/${id}/complete`, { v: 1, project_id: randomUUID(), bytes: 10, line_count: 3, endpoints: {} })).status).toBe(404);

    const aborted = await internal('DELETE', `/internal/v1/files/${id}?project_id=${project}`);
    expect(aborted.body).toEqual({ id, deleted: true });
    expect((await internal('POST', `/internal/v1/files/${id}/lines`, { v: 1, project_id: project, first_line: 1, lines: lines.slice(1, 2) })).status).toBe(404);
    expect((await complete(3)).status).toBe(404);
  });

  it('list a page at a time, by purpose, either way, never a batch’s requests', async () => {
    const { project, key } = await newProject();
    const files: FileRow[] = [];
    for (let i = 0; i < 5; i++) files.push(await upload(project, key, [chatLine(i)]));
    const requests = await upload(project, key, [chatLine(9)], { purpose: 'batch_requests', endpoints: { '/v1/messages': 0 } });
    const list = async (query: string) => {
      const res = await internal('GET', `/internal/v1/files?project_id=${project}${query}`);
      expect(res.status, res.text).toBe(200);
      return res.body as { data: FileRow[]; has_more: boolean };
    };
    const newestFirst = [...files].reverse().map((f) => f.id);
    expect((await list('')).data.map((f) => f.id)).toEqual(newestFirst);
    const first = await list('&limit=2');
    expect(first.data.map((f) => f.id)).toEqual(newestFirst.slice(0, 2));
    expect(first.has_more).toBe(true);
    const second = await list(`&limit=2&after=${first.data[1]!.id}`);
    expect(second.data.map((f) => f.id)).toEqual(newestFirst.slice(2, 4));
    const last = await list(`&limit=2&after=${second.data[1]!.id}`);
    expect(last).toEqual({ data: [expect.objectContaining({ id: newestFirst[4] })], has_more: false });
    expect((await list('&order=asc&limit=3')).data.map((f) => f.id)).toEqual(files.slice(0, 3).map((f) => f.id));
    expect((await list(`&order=asc&after=${files[2]!.id}`)).data.map((f) => f.id)).toEqual(files.slice(3).map((f) => f.id));
    expect((await list('&purpose=batch')).data).toHaveLength(5);
    expect((await list('&purpose=batch_output')).data).toEqual([]);
    expect((await list('&purpose=batch_requests')).data).toEqual([]);
    // Not listed, but readable by its id: the Anthropic batch's requests.
    expect((await internal('GET', `/internal/v1/files/${requests.id}?project_id=${project}`)).body).toMatchObject({ purpose: 'batch_requests' });

    for (const query of ['&limit=0', '&limit=10001', '&order=sideways', '&extra=1', '&after=a.b']) {
      expect((await internal('GET', `/internal/v1/files?project_id=${project}${query}`)).status, query).toBe(400);
    }
    expect((await internal('GET', '/internal/v1/files')).status).toBe(400);
  });

  it('refuse a project that does not exist or was deleted, and bad bodies', async () => {
    const { project, key } = await newProject();
    const good = { v: 1, project_id: project, key_id: key, purpose: 'batch', filename: 'x.jsonl' };
    const missing = await internal('POST', '/internal/v1/files', { ...good, project_id: randomUUID() });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: 'NOT_FOUND', param: 'project_id' });
    for (const [what, body, param] of [
      ['v 2', { ...good, v: 2 }, 'v'],
      ['purpose batch_output', { ...good, purpose: 'batch_output' }, 'purpose'],
      ['no filename', { ...good, filename: '' }, 'filename'],
      ['key not a uuid', { ...good, key_id: 'k' }, 'key_id'],
      ['an unknown field', { ...good, extra: true }, 'extra'],
    ] as const) {
      const res = await internal('POST', '/internal/v1/files', body);
      expect(res.status, what).toBe(400);
      expect(res.body.error, what).toMatchObject({ code: 'INVALID_REQUEST', param });
    }
    const id = (await internal('POST', '/internal/v1/files', good)).body.id as string;
    for (const body of [
      { v: 1, project_id: project, first_line: -1, lines: [] },
      { v: 1, project_id: project, first_line: 0, lines: [1] },
      { v: 1, project_id: project, first_line: 0, lines: ['a\u0000b'] },
    ]) {
      expect((await internal('POST', `/internal/v1/files/${id}/lines`, body)).status, JSON.stringify(body)).toBe(400);
    }

    expect((await h.api('DELETE', `/v1/projects/${project}`, { token: h.adminToken })).status).toBe(204);
    expect((await internal('POST', '/internal/v1/files', good)).status).toBe(404);
  });

  it('take pages of lines larger than the default body limit', async () => {
    const { project, key } = await newProject();
    // 3000 lines of about 8 KiB: some 24 MiB in one call.
    const lines = Array.from({ length: 3000 }, (_, i) => JSON.stringify({ custom_id: `big-${i}`, method: 'POST', url: '/v1/chat/completions', body: { messages: [{ role: 'user', content: 'x'.repeat(8000) }] } }));
    const file = await upload(project, key, lines, { pageSize: 3000 });
    expect(file.line_count).toBe(3000);
    const content = await internal('GET', `/internal/v1/files/${file.id}/content?project_id=${project}`);
    expect(content.text).toBe(lines.map((l) => `${l}\n`).join(''));

    // Readers that go away mid-stream give their connection back: more of them than the pool holds.
    for (let i = 0; i < 15; i++) {
      const aborted = new AbortController();
      const res = await fetch(`${h.base}/internal/v1/files/${file.id}/content?project_id=${project}`, { headers: { authorization: `Bearer ${TOKEN}` }, signal: aborted.signal });
      const reader = res.body!.getReader();
      expect((await reader.read()).done).toBe(false);
      aborted.abort();
      await reader.closed.catch(() => {});
    }
    const after = await internal('GET', `/internal/v1/files/${file.id}?project_id=${project}`);
    expect(after.status).toBe(200);
    expect((await internal('GET', `/internal/v1/files/${file.id}/content?project_id=${project}`)).text.length).toBe(content.text.length);
  });

  it('refuse callers without the internal token', async () => {
    const { project, key } = await newProject();
    const file = await upload(project, key, [chatLine(0)]);
    for (const token of [null, 'not-the-token', h.adminToken]) {
      for (const [method, path, body] of [
        ['POST', '/internal/v1/files', { v: 1, project_id: project, key_id: key, purpose: 'batch', filename: 'x' }],
        ['POST', `/internal/v1/files/${file.id}/lines`, { nonsense: true }],
        ['GET', `/internal/v1/files?project_id=${project}`, undefined],
        ['GET', `/internal/v1/files/${file.id}/content?project_id=${project}`, undefined],
        ['DELETE', `/internal/v1/files/${file.id}?project_id=${project}`, undefined],
        ['POST', '/internal/v1/batches', { nonsense: true }],
        ['GET', `/internal/v1/batches?project_id=${project}`, undefined],
        ['GET', '/internal/v1/batches/batch_x/run', undefined],
        ['POST', '/internal/v1/batches/batch_x/claim', { v: 1, after: -1, limit: 1 }],
        ['POST', '/internal/v1/batches/batch_x/finish', { nonsense: true }],
      ] as const) {
        const res = await internal(method, path, body, token);
        expect(res.status, `${method} ${path}`).toBe(401);
        expect(res.body.error).toMatchObject({ code: 'UNAUTHORIZED' });
      }
    }
    expect((await internal('GET', `/internal/v1/files/${file.id}?project_id=${project}`)).status).toBe(200);
  });
});

describe('the internal batch routes', () => {
  it('make a batch on a processed file of the project, running at once', async () => {
    const { project, key } = await newProject();
    const lines = Array.from({ length: 7 }, (_, i) => chatLine(i));
    const file = await upload(project, key, lines);
    const created = await newBatch(project, key, file.id, { metadata: { team: 'search' } });
    expect(created.status, created.text).toBe(201);
    const batch = created.body as BatchRow;
    expect(batch).toEqual({
      id: expect.stringMatching(/^batch_[A-Za-z0-9]{24}$/),
      project_id: project,
      key_id: key,
      api: 'openai',
      endpoint: '/v1/chat/completions',
      input_file_id: file.id,
      completion_window: '24h',
      metadata: { team: 'search' },
      status: 'in_progress',
      total: 7,
      completed: 0,
      failed: 0,
      output_file_id: null,
      error_file_id: null,
      reason: null,
      created_at: expect.any(Number),
      in_progress_at: expect.any(Number),
      finalizing_at: null,
      completed_at: null,
      failed_at: null,
      expired_at: null,
      cancelling_at: null,
      cancelled_at: null,
      expires_at: batch.created_at + 86_400,
    });
    expect(batch.in_progress_at! - batch.created_at).toBeLessThanOrEqual(1);
    expect(await h.sql`select line_no from batch_lines where batch_id = ${batch.id} order by line_no`).toEqual(lines.map((_, line_no) => ({ line_no })));

    expect((await internal('GET', `/internal/v1/batches/${batch.id}?project_id=${project}`)).body).toEqual(batch);
    const other = await newProject();
    const notTheirs = await internal('GET', `/internal/v1/batches/${batch.id}?project_id=${other.project}`);
    expect(notTheirs.status).toBe(404);
    expect(notTheirs.body.error).toMatchObject({ code: 'NOT_FOUND', param: 'batch_id' });
    expect((await internal('GET', `/internal/v1/batches/${batch.id}/results?project_id=${other.project}`)).status).toBe(404);
    expect((await internal('POST', `/internal/v1/batches/${batch.id}/cancel?project_id=${other.project}`)).status).toBe(404);
    // Another project's file is no file.
    const stolen = await newBatch(other.project, other.key, file.id);
    expect(stolen.status).toBe(404);
    expect(stolen.body.error).toMatchObject({ code: 'NOT_FOUND', param: 'file_id' });

    // An Anthropic batch: on its requests, msgbatch_….
    const requests = await upload(project, key, [chatLine(0, '/v1/messages')], { purpose: 'batch_requests', endpoints: { '/v1/messages': 0 } });
    const anthropic = await newBatch(project, key, requests.id, { api: 'anthropic', endpoint: '/v1/messages' });
    expect(anthropic.status, anthropic.text).toBe(201);
    expect(anthropic.body.id).toMatch(/^msgbatch_[A-Za-z0-9]{24}$/);
  });

  it('refuse a file that cannot be used, naming the first line calling another endpoint', async () => {
    const { project, key } = await newProject();
    const lines = Array.from({ length: 10 }, (_, i) => chatLine(i, i === 4 || i === 8 ? '/v1/embeddings' : i === 6 ? '/v1/responses' : '/v1/chat/completions'));
    const mixed = await upload(project, key, lines, { endpoints: { '/v1/chat/completions': 0, '/v1/responses': 6, '/v1/embeddings': 4 } });
    const mismatch = await newBatch(project, key, mixed.id);
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error).toMatchObject({
      code: 'INVALID_REQUEST',
      param: 'endpoint',
      message: "Line 5 of the input file calls /v1/embeddings, not the batch's endpoint /v1/chat/completions.",
    });
    const onlyEmbeddings = await upload(project, key, [chatLine(0, '/v1/embeddings'), chatLine(1, '/v1/embeddings')], { endpoints: { '/v1/embeddings': 0 } });
    const line1 = await newBatch(project, key, onlyEmbeddings.id);
    expect(line1.body.error.message).toBe("Line 1 of the input file calls /v1/embeddings, not the batch's endpoint /v1/chat/completions.");
    expect((await newBatch(project, key, onlyEmbeddings.id, { endpoint: '/v1/embeddings' })).status).toBe(201);

    const notUsable = async (fileId: string, extra: Record<string, unknown>, why: string) => {
      const res = await newBatch(project, key, fileId, extra);
      expect(res.status, why).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_REQUEST', param: 'input_file_id', message: `The input file cannot be used for a batch: ${why}.` });
    };
    const requests = await upload(project, key, [chatLine(0, '/v1/messages')], { purpose: 'batch_requests', endpoints: { '/v1/messages': 0 } });
    await notUsable(requests.id, {}, 'its purpose is batch_requests, not batch');
    const plain = await upload(project, key, [chatLine(0, '/v1/messages')], { endpoints: { '/v1/messages': 0 } });
    await notUsable(plain.id, { api: 'anthropic', endpoint: '/v1/messages' }, 'its purpose is batch, not batch_requests');
    const uploading = (await internal('POST', '/internal/v1/files', { v: 1, project_id: project, key_id: key, purpose: 'batch', filename: 'x' })).body.id as string;
    await notUsable(uploading, {}, 'it is still being uploaded');

    const gone = await upload(project, key, [chatLine(0)]);
    expect((await internal('DELETE', `/internal/v1/files/${gone.id}?project_id=${project}`)).status).toBe(200);
    for (const fileId of [gone.id, 'file-neverMadeNeverMadeNever']) {
      const res = await newBatch(project, key, fileId);
      expect(res.status, fileId).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'NOT_FOUND', param: 'file_id' });
    }
    expect((await newBatch(randomUUID(), key, gone.id)).body.error).toMatchObject({ code: 'NOT_FOUND', param: 'project_id' });
    expect((await newBatch(project, key, mixed.id, { endpoint: '/v1/images' })).status).toBe(400);
    expect(await h.sql`select id from batches where project_id = ${project} and api = 'openai'`).toHaveLength(1);
  });

  it('list the batches of a project newest first, a page at a time, by api', async () => {
    const { project, key } = await newProject();
    const file = await upload(project, key, [chatLine(0)]);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await newBatch(project, key, file.id)).body.id as string);
    const requests = await upload(project, key, [chatLine(0, '/v1/messages')], { purpose: 'batch_requests', endpoints: { '/v1/messages': 0 } });
    const anthropic = (await newBatch(project, key, requests.id, { api: 'anthropic', endpoint: '/v1/messages' })).body.id as string;
    const list = async (query: string) => (await internal('GET', `/internal/v1/batches?project_id=${project}${query}`)).body as { data: BatchRow[]; has_more: boolean };
    expect((await list('')).data.map((b) => b.id)).toEqual([anthropic, ...ids.reverse()]);
    const openai = await list('&api=openai&limit=3');
    expect(openai.data.map((b) => b.id)).toEqual(ids.slice(0, 3));
    expect(openai.has_more).toBe(true);
    expect(await list(`&api=openai&limit=3&after=${openai.data[2]!.id}`)).toEqual({ data: [expect.objectContaining({ id: ids[3] })], has_more: false });
    expect((await list('&api=anthropic')).data.map((b) => b.id)).toEqual([anthropic]);
    const other = await newProject();
    expect((await internal('GET', `/internal/v1/batches?project_id=${other.project}`)).body).toEqual({ data: [], has_more: false });
    for (const query of ['&limit=0', '&limit=1001', '&api=google']) expect((await internal('GET', `/internal/v1/batches?project_id=${project}${query}`)).status, query).toBe(400);
  });

  it('hand out lines in order, each keeping the moment it was first claimed', async () => {
    const { batch, lines } = await batchOf(12);
    const first = await claim(batch.id, -1, 5);
    expect(first.map((l) => l.line_no)).toEqual([0, 1, 2, 3, 4]);
    expect(first.map((l) => l.content)).toEqual(lines.slice(0, 5));
    for (const line of first) expect(Math.abs(line.claimed_at - Date.now())).toBeLessThan(60_000);
    const next = await claim(batch.id, 4, 5);
    expect(next.map((l) => l.line_no)).toEqual([5, 6, 7, 8, 9]);

    // The runner died before answering: the next one claims from the start, and gets the same moments.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const again = await claim(batch.id, -1, 10);
    expect(again).toEqual([...first, ...next]);
    const [stored] = await h.sql`select claimed_at from batch_lines where batch_id = ${batch.id} and line_no = 0`;
    expect((stored!.claimed_at as Date).getTime()).toBe(first[0]!.claimed_at);

    // Answered lines are not handed out again.
    expect((await postResults(batch.id, [answer(0), answer(2, 500, { error: { message: 'boom' } })])).status).toBe(200);
    expect((await claim(batch.id, -1, 3)).map((l) => l.line_no)).toEqual([1, 3, 4]);
    const rest = await claim(batch.id, 9, 100);
    expect(rest.map((l) => l.line_no)).toEqual([10, 11]);
    expect(await claim(batch.id, 11, 100)).toEqual([]);

    const missing = await internal('POST', '/internal/v1/batches/batch_neverMadeNeverMadeNever/claim', { v: 1, after: -1, limit: 1 });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: 'NOT_FOUND', param: 'batch_id' });
    for (const body of [{ v: 1, after: -2, limit: 1 }, { v: 1, after: -1, limit: 0 }, { v: 1, after: -1, limit: 5001 }, { v: 1, after: -1 }]) {
      expect((await internal('POST', `/internal/v1/batches/${batch.id}/claim`, body)).status, JSON.stringify(body)).toBe(400);
    }
  });

  it('keep the first answer of a line and count it once', async () => {
    const { project, batch } = await batchOf(4);
    const first = await postResults(batch.id, [answer(0), answer(1, 429, { error: { message: 'slow down' } })]);
    expect(first.status, first.text).toBe(200);
    expect(first.body).toEqual({ status: 'in_progress', inserted: 2 });
    // Sent again (a retry), with another body: nothing changes.
    const retried = await postResults(batch.id, [answer(0, 200, { id: 'other' }), answer(1, 200, { id: 'other' })]);
    expect(retried.body).toEqual({ status: 'in_progress', inserted: 0 });
    const mixed = await postResults(batch.id, [answer(1), answer(2, 200, null), answer(99)]);
    expect(mixed.body).toEqual({ status: 'in_progress', inserted: 1 });
    const read = (await internal('GET', `/internal/v1/batches/${batch.id}?project_id=${project}`)).body as BatchRow;
    expect([read.completed, read.failed]).toEqual([2, 1]);

    const results = await internal('GET', `/internal/v1/batches/${batch.id}/results?project_id=${project}`);
    expect(results.status).toBe(200);
    expect(results.headers.get('content-type')).toBe('application/jsonl');
    expect(jsonLines<StoredLineResult>(results.text)).toEqual([
      { line_no: 0, custom_id: 'req-0', status_code: 200, request_id: 'req_0', body: answer(0).body, error: null },
      { line_no: 1, custom_id: 'req-1', status_code: 429, request_id: 'req_1', body: { error: { message: 'slow down' } }, error: null },
      { line_no: 2, custom_id: 'req-2', status_code: 200, request_id: 'req_2', body: null, error: null },
      { line_no: 3, custom_id: 'req-3', status_code: 0, request_id: null, body: null, error: null },
    ]);

    // JSON PostgreSQL cannot store: refused whole, nothing stored.
    const surrogate = await h.api('POST', `/internal/v1/batches/${batch.id}/results`, {
      token: TOKEN,
      rawBody: JSON.stringify({ v: 1, results: [answer(3, 200, { text: 'LONE' })] }).replace('LONE', '\\ud800'),
    });
    expect(surrogate.status, surrogate.text).toBe(400);
    expect(surrogate.body.error).toMatchObject({ code: 'INVALID_REQUEST' });
    const [line3] = await h.sql`select answered_at from batch_lines where batch_id = ${batch.id} and line_no = 3`;
    expect(line3!.answered_at).toBeNull();

    for (const result of [{ ...answer(3), status_code: 199 }, { ...answer(3), status_code: 600 }, { ...answer(3), extra: 1 }, { line_no: 3, custom_id: 'x', status_code: 200, request_id: 'r' }]) {
      expect((await postResults(batch.id, [result])).status, JSON.stringify(result)).toBe(400);
    }
    expect((await postResults('batch_neverMadeNeverMadeNever', [answer(0)])).status).toBe(404);
  });

  it('take large and deeply nested answers', async () => {
    const { project, batch } = await batchOf(3);
    let nested: unknown = 'leaf';
    for (let i = 0; i < 100; i++) nested = { a: nested };
    const big = { data: [{ embedding: Array.from({ length: 200_000 }, (_, i) => i / 7) }] };
    const res = await postResults(batch.id, [answer(0, 200, big), answer(1, 200, nested)]);
    expect(res.status, res.text.slice(0, 200)).toBe(200);
    const lines = jsonLines<StoredLineResult>((await internal('GET', `/internal/v1/batches/${batch.id}/results?project_id=${project}`)).text);
    expect(lines[0]!.body).toEqual(big);
    expect(lines[1]!.body).toEqual(nested);
  });

  it('cancel a running batch, then end it cancelled with the lines answered so far', async () => {
    const { project, batch } = await batchOf(5);
    expect((await postResults(batch.id, [answer(0), answer(1, 400, { error: { message: 'bad' } })])).status).toBe(200);
    const cancelling = await internal('POST', `/internal/v1/batches/${batch.id}/cancel?project_id=${project}`);
    expect(cancelling.status, cancelling.text).toBe(200);
    expect(cancelling.body).toMatchObject({ id: batch.id, status: 'cancelling', cancelling_at: expect.any(Number), cancelled_at: null });
    // Again: as it is.
    expect((await internal('POST', `/internal/v1/batches/${batch.id}/cancel?project_id=${project}`)).body).toEqual(cancelling.body);
    // The runner sees it with its next answers.
    expect((await postResults(batch.id, [answer(2)])).body).toEqual({ status: 'cancelling', inserted: 1 });

    const ended = await finish(batch.id, { outcome: 'cancelled' });
    expect(ended.status, ended.text).toBe(200);
    const row = ended.body as BatchRow;
    expect(row).toMatchObject({ status: 'cancelled', completed: 2, failed: 1, reason: null, cancelled_at: expect.any(Number), finalizing_at: expect.any(Number), completed_at: null });
    expect(row.output_file_id).toMatch(/^file-[A-Za-z0-9]{24}$/);
    expect(row.error_file_id).toMatch(/^file-[A-Za-z0-9]{24}$/);
    const results = jsonLines<StoredLineResult>((await internal('GET', `/internal/v1/batches/${batch.id}/results?project_id=${project}`)).text);
    expect(results.map((r) => r.status_code)).toEqual([200, 400, 200, 0, 0]);

    const refused = await internal('POST', `/internal/v1/batches/${batch.id}/cancel?project_id=${project}`);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'CONFLICT', param: 'batch_id', message: 'The batch is cancelled and can no longer be cancelled.' });
    // Ended: no more answers, and finishing again changes nothing.
    expect((await postResults(batch.id, [answer(3)])).body).toEqual({ status: 'cancelled', inserted: 0 });
    expect((await finish(batch.id, { outcome: 'completed', unanswered: { status_code: 500, code: 'X', message: 'x' } })).body).toEqual(row);
    expect(await h.sql`select id from batch_files where batch_id = ${batch.id}`).toHaveLength(2);
  });

  it('end a batch completed with output and error files holding its lines', async () => {
    const { project, batch } = await batchOf(6);
    const bodies = [0, 1, 2, 3, 4, 5].map((i) => ({ id: `chatcmpl-${i}`, choices: [{ message: { content: `answer ${i}` } }] }));
    const codes = [200, 500, 200, 404, 201, 200];
    expect((await postResults(batch.id, codes.map((code, i) => answer(i, code, bodies[i])))).body).toEqual({ status: 'in_progress', inserted: 6 });
    const ended = await finish(batch.id, { outcome: 'completed' });
    expect(ended.status, ended.text).toBe(200);
    const row = ended.body as BatchRow;
    expect(row).toMatchObject({ status: 'completed', completed: 4, failed: 2, completed_at: expect.any(Number), cancelled_at: null, failed_at: null });

    const file = async (id: string) => (await internal('GET', `/internal/v1/files/${id}?project_id=${project}`)).body as FileRow;
    expect(await file(row.output_file_id!)).toEqual({
      id: row.output_file_id,
      project_id: project,
      purpose: 'batch_output',
      filename: `${batch.id}_output.jsonl`,
      bytes: 0,
      line_count: 4,
      status: 'processed',
      batch_id: batch.id,
      created_at: expect.any(Number),
      expires_at: null,
    });
    expect(await file(row.error_file_id!)).toMatchObject({ purpose: 'batch_error', filename: `${batch.id}_error.jsonl`, line_count: 2, batch_id: batch.id });

    const content = async (id: string) => {
      const res = await internal('GET', `/internal/v1/files/${id}/content?project_id=${project}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/jsonl');
      return jsonLines<StoredLineResult>(res.text);
    };
    const expected = (i: number): StoredLineResult => ({ line_no: i, custom_id: `req-${i}`, status_code: codes[i]!, request_id: `req_${i}`, body: bodies[i], error: null });
    expect(await content(row.output_file_id!)).toEqual([0, 2, 4, 5].map(expected));
    expect(await content(row.error_file_id!)).toEqual([1, 3].map(expected));
    // Listed with the client's files.
    const purposes = (await internal('GET', `/internal/v1/files?project_id=${project}`)).body.data.map((f: FileRow) => f.purpose);
    expect(purposes.sort()).toEqual(['batch', 'batch_error', 'batch_output']);
    const other = await newProject();
    expect((await internal('GET', `/internal/v1/files/${row.output_file_id}/content?project_id=${other.project}`)).status).toBe(404);

    // All answered 2xx: no error file.
    const clean = await batchOf(2);
    await postResults(clean.batch.id, [answer(0), answer(1)]);
    const cleanEnd = (await finish(clean.batch.id, { outcome: 'completed' })).body as BatchRow;
    expect(cleanEnd.output_file_id).not.toBeNull();
    expect(cleanEnd.error_file_id).toBeNull();
  });

  it('answer the lines left with the error it is given when it ends', async () => {
    const { project, batch } = await batchOf(4);
    await postResults(batch.id, [answer(1)]);
    const ended = await finish(batch.id, {
      outcome: 'failed',
      reason: { code: 'UPSTREAM_ERROR', message: 'The provider is down.' },
      unanswered: { status_code: 503, code: 'UPSTREAM_ERROR', message: 'The line was not run.' },
    });
    expect(ended.status, ended.text).toBe(200);
    const row = ended.body as BatchRow;
    expect(row).toMatchObject({ status: 'failed', completed: 1, failed: 3, failed_at: expect.any(Number), reason: { code: 'UPSTREAM_ERROR', message: 'The provider is down.' } });
    const unanswered = (i: number): StoredLineResult => ({ line_no: i, custom_id: `req-${i}`, status_code: 503, request_id: null, body: null, error: { code: 'UPSTREAM_ERROR', message: 'The line was not run.' } });
    const errors = jsonLines<StoredLineResult>((await internal('GET', `/internal/v1/files/${row.error_file_id}/content?project_id=${project}`)).text);
    expect(errors).toEqual([0, 2, 3].map(unanswered));
    const all = jsonLines<StoredLineResult>((await internal('GET', `/internal/v1/batches/${batch.id}/results?project_id=${project}`)).text);
    expect(all.map((r) => r.status_code)).toEqual([503, 200, 503, 503]);

    for (const body of [
      { outcome: 'timed_out' },
      { outcome: 'completed', unanswered: { status_code: 200, code: 'X', message: 'x' } },
      { outcome: 'completed', reason: { code: 'X' } },
    ]) {
      expect((await finish(batch.id, body)).status, JSON.stringify(body)).toBe(400);
    }
    expect((await finish('batch_neverMadeNeverMadeNever', { outcome: 'completed' })).status).toBe(404);
  });

  it('read the custom_id of a line holding escapes PostgreSQL refuses', async () => {
    const { project, key } = await newProject();
    const lines = [
      JSON.stringify({ custom_id: 'nul', method: 'POST', url: '/v1/chat/completions', body: { messages: [{ role: 'user', content: 'a\u0000b' }] } }),
      '{"custom_id":"lone","method":"POST","url":"/v1/chat/completions","body":{"messages":[{"role":"user","content":"\\ud800"}]}}',
      '{"custom_id":"pair \\ud83d\\ude00","method":"POST","url":"/v1/chat/completions","body":{}}',
      chatLine(3),
    ];
    const file = await upload(project, key, lines);
    expect((await internal('GET', `/internal/v1/files/${file.id}/content?project_id=${project}`)).text).toBe(lines.map((l) => `${l}\n`).join(''));
    const batch = (await newBatch(project, key, file.id)).body as BatchRow;
    const results = jsonLines<StoredLineResult>((await internal('GET', `/internal/v1/batches/${batch.id}/results?project_id=${project}`)).text);
    expect(results.map((r) => r.custom_id)).toEqual(['nul', 'lone', 'pair 😀', 'req-3']);
  });

  it('give the runner its batch and key hash, and 404 for no batch', async () => {
    const { project, key, batch } = await batchOf(2);
    const run = await internal('GET', `/internal/v1/batches/${batch.id}/run`);
    expect(run.status).toBe(200);
    const [row] = await h.sql`select key_hash from api_keys where id = ${key}`;
    expect(run.body).toEqual({ batch: (await internal('GET', `/internal/v1/batches/${batch.id}?project_id=${project}`)).body, key_hash: row!.key_hash });
    const missing = await internal('GET', '/internal/v1/batches/batch_neverMadeNeverMadeNever/run');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: 'NOT_FOUND', param: 'batch_id' });
  });
});

describe('deleting the key or the project that made a batch', () => {
  it('cancels its running batches with reason UNAUTHORIZED, and the runner gets no key', async () => {
    const { project, key, batch } = await batchOf(3);
    // A batch of another key of the project, and one that ended already, stay as they are.
    const otherKey = (await h.api('POST', `/v1/projects/${project}/keys`, { token: h.adminToken, body: { name: 'other' } })).body.id as string;
    const file = await upload(project, otherKey, [chatLine(0)]);
    const untouched = (await newBatch(project, otherKey, file.id)).body as BatchRow;
    const done = (await newBatch(project, key, file.id)).body as BatchRow;
    await postResults(done.id, [answer(0)]);
    const doneRow = (await finish(done.id, { outcome: 'completed' })).body as BatchRow;

    expect((await h.api('DELETE', `/v1/projects/${project}/keys/${key}`, { token: h.adminToken })).status).toBe(204);
    const cancelled = (await internal('GET', `/internal/v1/batches/${batch.id}?project_id=${project}`)).body as BatchRow;
    expect(cancelled).toMatchObject({ status: 'cancelling', cancelling_at: expect.any(Number), reason: { code: 'UNAUTHORIZED', message: 'The API key that made the batch was deleted.' } });
    const run = await internal('GET', `/internal/v1/batches/${batch.id}/run`);
    expect(run.body).toEqual({ batch: cancelled, key_hash: null });
    expect((await internal('GET', `/internal/v1/batches/${untouched.id}?project_id=${project}`)).body).toEqual(untouched);
    expect((await internal('GET', `/internal/v1/batches/${done.id}?project_id=${project}`)).body).toEqual(doneRow);

    // The runner ends it with the error for the lines left; the reason stays the deletion's.
    const ended = await finish(batch.id, { outcome: 'cancelled', unanswered: { status_code: 401, code: 'UNAUTHORIZED', message: 'The API key that made the batch was deleted.' } });
    expect(ended.body).toMatchObject({ status: 'cancelled', failed: 3, reason: { code: 'UNAUTHORIZED' } });

    // The project's deletion: every running batch of it.
    expect((await internal('GET', `/internal/v1/batches/${untouched.id}/run`)).body.key_hash).toEqual(expect.any(String));
    expect((await h.api('DELETE', `/v1/projects/${project}`, { token: h.adminToken })).status).toBe(204);
    const run2 = (await internal('GET', `/internal/v1/batches/${untouched.id}/run`)).body as { batch: BatchRow; key_hash: string | null };
    expect(run2.key_hash).toBeNull();
    expect(run2.batch).toMatchObject({ status: 'cancelling', reason: { code: 'UNAUTHORIZED' } });
  });
});

describe('the internal routes and the OpenAPI document', () => {
  it('leaves the file and batch routes out', async () => {
    const doc = (await h.api('GET', '/openapi.json')).body;
    // The management API's own batch routes (a project's batches, read by its people) are the only ones in it.
    const management = (path: string) => path.startsWith('/v1/projects/{id}/batches');
    expect(Object.keys(doc.paths).filter((path) => path.includes('internal') || (path.includes('batches') && !management(path)) || path.includes('files'))).toEqual([]);
    expect(h.cp.app.routeTable.map((r) => `${r.method} ${r.url}`)).toEqual(
      expect.arrayContaining(['POST /internal/v1/files', 'GET /internal/v1/files/:id/content', 'POST /internal/v1/batches/:id/finish', 'GET /internal/v1/batches/:id/results']),
    );
  });
});
