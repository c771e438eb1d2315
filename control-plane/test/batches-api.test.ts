import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BatchRow, StoredLineResult } from '@gateway/shared';
import { outputLine as proxyOutputLine } from '../../proxy/src/batches/openai-batch-objects.js';
import { DELETED_PROJECT_BATCH_RETENTION_DAYS } from '../src/batches/batch-purger.js';
import { answer, makeBatch, newProjectWithKey } from './batch-fixtures.js';
import { startHarness, type Harness } from './harness.js';

/**
 * The management routes of a project's batches (GET /v1/projects/{id}/batches…) against a real
 * control plane and PostgreSQL, on batches made through the db functions the internal routes
 * use: the list newest first and paged, one batch, the output and error lines streamed in the
 * proxy's output-file shape, who may read them; and the purge of a deleted project's batches and
 * files once its retention has passed.
 */
const TOKEN = 'internal-token-for-the-batches-api-test';
let h: Harness;
beforeAll(async () => {
  h = await startHarness('batches-api', { env: { INTERNAL_TOKEN: TOKEN } });
});
afterAll(async () => h?.close());

const KEY_DELETED = { status_code: 401, code: 'UNAUTHORIZED', message: 'The API key that made the batch was deleted.' };

function jsonLines(text: string): Record<string, unknown>[] {
  expect(text === '' || text.endsWith('\n')).toBe(true);
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/**
 * What the proxy's GET /v1/files/{id}/content answers for the batch's output or error file: its
 * rendering of the results the internal route streams it (bodies as PostgreSQL keeps them).
 */
async function proxyFile(project: string, batch: BatchRow, which: 'output' | 'errors'): Promise<string> {
  const results = await h.api('GET', `/internal/v1/batches/${batch.id}/results?project_id=${project}`, { token: TOKEN });
  expect(results.status, results.text).toBe(200);
  const lines = (jsonLines(results.text) as unknown as StoredLineResult[]).filter((r) => (which === 'output' ? r.status_code >= 200 && r.status_code < 300 : r.status_code >= 300));
  return lines.map((r) => `${proxyOutputLine(batch.id, r)}\n`).join('');
}

describe('GET /v1/projects/{id}/batches', () => {
  it("lists the project's batches of both APIs newest first, a page at a time, with their progress", async () => {
    const { project, key } = await newProjectWithKey(h, 'batches list');
    const first = await makeBatch(h, project, key, { lines: 3, answers: [answer(0), answer(1, 429)] });
    const second = await makeBatch(h, project, key, { api: 'anthropic', lines: 2, answers: [answer(0)], finish: { outcome: 'completed', unanswered: KEY_DELETED } });
    const third = await makeBatch(h, project, key, { lines: 1 });
    // Made within the same second: the order is created_at then id, as the proxy's lists have it.
    await h.sql`update batches set created_at = now() - make_interval(mins => ${3}) where id = ${first.id}`;
    await h.sql`update batches set created_at = now() - make_interval(mins => ${2}) where id = ${second.id}`;

    const all = await h.api('GET', `/v1/projects/${project}/batches`, { token: h.adminToken });
    expect(all.status, all.text).toBe(200);
    expect(all.body.data.map((b: { id: string }) => b.id)).toEqual([third.id, second.id, first.id]);
    expect(all.body).toMatchObject({ has_more: false, next_cursor: null });
    const [, anthropic, openai] = all.body.data;
    expect(openai).toEqual({
      id: first.id,
      project_id: project,
      key_id: key,
      api: 'openai',
      endpoint: '/v1/chat/completions',
      status: 'in_progress',
      request_counts: { total: 3, completed: 1, failed: 1 },
      input_file_id: first.input_file_id,
      output_file_id: null,
      error_file_id: null,
      metadata: { job: 'nightly' },
      reason: null,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/),
      in_progress_at: expect.stringMatching(/Z$/),
      finalizing_at: null,
      completed_at: null,
      failed_at: null,
      expired_at: null,
      cancelling_at: null,
      cancelled_at: null,
      expires_at: expect.stringMatching(/Z$/),
    });
    expect(Date.parse(openai.expires_at) - Date.parse(openai.in_progress_at)).toBeGreaterThanOrEqual(24 * 3600_000 - 1000);
    expect(anthropic).toMatchObject({
      id: second.id,
      api: 'anthropic',
      endpoint: '/v1/messages',
      status: 'completed',
      request_counts: { total: 2, completed: 1, failed: 1 },
      output_file_id: expect.stringMatching(/^file-/),
      error_file_id: expect.stringMatching(/^file-/),
      reason: { code: 'UNAUTHORIZED', message: KEY_DELETED.message },
      completed_at: expect.stringMatching(/Z$/),
    });

    const page1 = await h.api('GET', `/v1/projects/${project}/batches?limit=2`, { token: h.adminToken });
    expect(page1.body.data.map((b: { id: string }) => b.id)).toEqual([third.id, second.id]);
    expect(page1.body).toMatchObject({ has_more: true, next_cursor: second.id });
    const page2 = await h.api('GET', `/v1/projects/${project}/batches?limit=2&after=${page1.body.next_cursor}`, { token: h.adminToken });
    expect(page2.body).toMatchObject({ data: [{ id: first.id }], has_more: false, next_cursor: null });

    const onlyAnthropic = await h.api('GET', `/v1/projects/${project}/batches?api=anthropic`, { token: h.adminToken });
    expect(onlyAnthropic.body.data.map((b: { id: string }) => b.id)).toEqual([second.id]);
    expect((await h.api('GET', `/v1/projects/${project}/batches?limit=0`, { token: h.adminToken })).status).toBe(400);
    expect((await h.api('GET', `/v1/projects/${project}/batches?api=gemini`, { token: h.adminToken })).status).toBe(400);

    const one = await h.api('GET', `/v1/projects/${project}/batches/${second.id}`, { token: h.adminToken });
    expect(one.status, one.text).toBe(200);
    expect(one.body).toEqual(anthropic);
  });

  it("answers another project's batch as one never made, and lets members and viewers read, nobody else", async () => {
    const a = await newProjectWithKey(h, 'batches mine');
    const b = await newProjectWithKey(h, 'batches theirs');
    const theirs = await makeBatch(h, b.project, b.key, { lines: 1, answers: [answer(0)], finish: { outcome: 'completed' } });
    for (const path of ['', '/output', '/errors']) {
      const res = await h.api('GET', `/v1/projects/${a.project}/batches/${theirs.id}${path}`, { token: h.adminToken });
      expect(res.status, path).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'NOT_FOUND', param: 'batch_id' });
      expect((await h.api('GET', `/v1/projects/${a.project}/batches/batch_never_made${path}`, { token: h.adminToken })).body).toEqual(res.body);
    }
    expect((await h.api('GET', `/v1/projects/${a.project}/batches`, { token: h.adminToken })).body.data).toEqual([]);

    const viewer = await h.createUser();
    expect((await h.api('POST', `/v1/projects/${b.project}/members`, { token: h.adminToken, body: { user_id: viewer.id, role: 'viewer' } })).status).toBe(201);
    expect((await h.api('GET', `/v1/projects/${b.project}/batches`, { token: viewer.token })).body.data).toHaveLength(1);
    expect((await h.api('GET', `/v1/projects/${b.project}/batches/${theirs.id}/output`, { token: viewer.token })).status).toBe(200);
    // Not a member: the project is as absent as one never made.
    for (const path of ['', `/${theirs.id}`, `/${theirs.id}/output`]) {
      expect((await h.api('GET', `/v1/projects/${randomUUID()}/batches${path}`, { token: viewer.token })).status).toBe(404);
      const other = await h.api('GET', `/v1/projects/${a.project}/batches${path}`, { token: viewer.token });
      expect(other.status).toBe(404);
      expect(other.body.error).toMatchObject({ code: 'NOT_FOUND', param: 'id' });
    }
    expect((await h.api('GET', `/v1/projects/${b.project}/batches`)).status).toBe(401);
  });
});

describe('POST /v1/projects/{id}/batches/{batch_id}/cancel', () => {
  it('lets members cancel a running batch, audited with them as actor; not viewers, not an ended batch, not another project\'s', async () => {
    const { project, key } = await newProjectWithKey(h, 'batches cancel');
    const running = await makeBatch(h, project, key, { lines: 2, answers: [answer(0)] });
    const ended = await makeBatch(h, project, key, { lines: 1, answers: [answer(0)], finish: { outcome: 'completed' } });
    const viewer = await h.createUser();
    const member = await h.createUser();
    for (const [user, role] of [[viewer, 'viewer'], [member, 'member']] as const) {
      expect((await h.api('POST', `/v1/projects/${project}/members`, { token: h.adminToken, body: { user_id: user.id, role } })).status).toBe(201);
    }
    const refused = await h.api('POST', `/v1/projects/${project}/batches/${running.id}/cancel`, { token: viewer.token });
    expect(refused.status).toBe(403);

    const cancelled = await h.api('POST', `/v1/projects/${project}/batches/${running.id}/cancel`, { token: member.token });
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.body).toMatchObject({ id: running.id, status: 'cancelling', cancelling_at: expect.stringMatching(/Z$/) });
    // Again: answered as it is, audited once.
    expect((await h.api('POST', `/v1/projects/${project}/batches/${running.id}/cancel`, { token: member.token })).body.status).toBe('cancelling');
    const events = await h.sql<{ actor: string; target_id: string }[]>`select actor, target_id from audit_events where type = 'batch.cancelled' and batch_id = ${running.id}`;
    expect(events).toEqual([{ actor: member.id, target_id: running.id }]);

    const late = await h.api('POST', `/v1/projects/${project}/batches/${ended.id}/cancel`, { token: member.token });
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe('CONFLICT');
    const other = await newProjectWithKey(h, 'batches cancel elsewhere');
    const stranger = await h.api('POST', `/v1/projects/${other.project}/batches/${running.id}/cancel`, { token: h.adminToken });
    expect(stranger.status).toBe(404);
  });
});

describe('GET /v1/projects/{id}/batches/{batch_id}/output and /errors', () => {
  it('streams the answered lines as JSON lines in the shape and with the ids of the proxy\'s output and error files', async () => {
    const { project, key } = await newProjectWithKey(h, 'batches output');
    const answers = [answer(0), answer(1, 429), answer(2), answer(4, 500)];
    const batch = await makeBatch(h, project, key, { lines: 6, answers, finish: { outcome: 'cancelled', unanswered: KEY_DELETED } });

    const output = await h.api('GET', `/v1/projects/${project}/batches/${batch.id}/output`, { token: h.adminToken });
    expect(output.status, output.text).toBe(200);
    expect(output.headers.get('content-type')).toBe('application/jsonl');
    expect(output.headers.get('content-disposition')).toBe(`attachment; filename="${batch.id}_output.jsonl"`);
    expect(output.headers.get('cache-control')).toBe('no-store');
    expect(output.text).toBe(await proxyFile(project, batch, 'output'));
    expect(jsonLines(output.text).map((l) => l.custom_id)).toEqual(['req-0', 'req-2']);
    const [line] = jsonLines(output.text);
    expect(line).toEqual({
      id: expect.stringMatching(/^batch_req_[0-9a-f]{32}$/),
      custom_id: 'req-0',
      response: { status_code: 200, request_id: 'req_line_0', body: answers[0]!.body },
      error: null,
    });

    const errors = await h.api('GET', `/v1/projects/${project}/batches/${batch.id}/errors`, { token: h.adminToken });
    expect(errors.status, errors.text).toBe(200);
    expect(errors.headers.get('content-disposition')).toBe(`attachment; filename="${batch.id}_error.jsonl"`);
    const error = { code: KEY_DELETED.code, message: KEY_DELETED.message };
    expect(errors.text).toBe(await proxyFile(project, batch, 'errors'));
    expect(jsonLines(errors.text).map((l) => [l.custom_id, (l.response as { status_code: number }).status_code, l.error])).toEqual([
      ['req-1', 429, null],
      ['req-3', 401, error],
      ['req-4', 500, null],
      ['req-5', 401, error],
    ]);
    // The same ids on every read.
    expect((await h.api('GET', `/v1/projects/${project}/batches/${batch.id}/errors`, { token: h.adminToken })).text).toBe(errors.text);
  });

  it('shows the lines answered so far of a running batch, and nothing for a batch with no such lines', async () => {
    const { project, key } = await newProjectWithKey(h, 'batches running');
    const batch = await makeBatch(h, project, key, { lines: 4, answers: [answer(1)] });
    const output = await h.api('GET', `/v1/projects/${project}/batches/${batch.id}/output`, { token: h.adminToken });
    expect(jsonLines(output.text).map((l) => l.custom_id)).toEqual(['req-1']);
    const errors = await h.api('GET', `/v1/projects/${project}/batches/${batch.id}/errors`, { token: h.adminToken });
    expect(errors.status).toBe(200);
    expect(errors.text).toBe('');
  });

  it('streams a batch of more lines than one cursor page, in line order', async () => {
    const { project, key } = await newProjectWithKey(h, 'batches many');
    const lines = 1_203;
    const answers = Array.from({ length: lines }, (_, i) => answer(i, i % 100 === 7 ? 503 : 200));
    const batch = await makeBatch(h, project, key, { lines, answers, finish: { outcome: 'completed' } });
    const output = jsonLines((await h.api('GET', `/v1/projects/${project}/batches/${batch.id}/output`, { token: h.adminToken })).text);
    const errors = jsonLines((await h.api('GET', `/v1/projects/${project}/batches/${batch.id}/errors`, { token: h.adminToken })).text);
    const failed = answers.filter((a) => a.status_code !== 200).map((a) => `req-${a.line_no}`);
    expect(failed).toHaveLength(12);
    expect(output).toHaveLength(lines - failed.length);
    expect(errors.map((l) => l.custom_id)).toEqual(failed);
    expect(output.map((l) => Number(String(l.custom_id).slice(4)))).toEqual(answers.filter((a) => a.status_code === 200).map((a) => a.line_no));
    expect(new Set(output.map((l) => l.id)).size).toBe(output.length);
  });
});

describe("the purge of deleted projects' batches and files", () => {
  const counts = async (project: string) => {
    const [row] = await h.sql<{ batches: number; lines: number; files: number; file_lines: number }[]>`
      select
        (select count(*)::int from batches where project_id = ${project}) as batches,
        (select count(*)::int from batch_lines l join batches b on b.id = l.batch_id where b.project_id = ${project}) as lines,
        (select count(*)::int from batch_files where project_id = ${project}) as files,
        (select count(*)::int from batch_file_lines l join batch_files f on f.id = l.file_id where f.project_id = ${project}) as file_lines`;
    return row!;
  };

  it(`deletes them, lines and all, ${DELETED_PROJECT_BATCH_RETENTION_DAYS} days after the project was deleted, and nothing else`, async () => {
    const old = await newProjectWithKey(h, 'purged long ago');
    const recent = await newProjectWithKey(h, 'purged recently');
    const live = await newProjectWithKey(h, 'still here');
    for (const p of [old, recent, live]) {
      await makeBatch(h, p.project, p.key, { lines: 25, answers: [answer(0), answer(1, 429)], finish: { outcome: 'completed' } });
      await makeBatch(h, p.project, p.key, { lines: 3 });
    }
    // Made beyond the batches: more than one delete's worth of files.
    for (let i = 0; i < 12; i++) await makeBatch(h, old.project, old.key, { lines: 1 });
    for (const p of [old, recent]) expect((await h.api('DELETE', `/v1/projects/${p.project}`, { token: h.adminToken })).status).toBe(204);
    await h.sql`update projects set deleted_at = now() - make_interval(days => ${DELETED_PROJECT_BATCH_RETENTION_DAYS}, hours => 1) where id = ${old.project}`;
    await h.sql`update projects set deleted_at = now() - make_interval(days => ${DELETED_PROJECT_BATCH_RETENTION_DAYS - 1}) where id = ${recent.project}`;
    const before = { old: await counts(old.project), recent: await counts(recent.project), live: await counts(live.project) };
    expect(before.old).toEqual({ batches: 14, lines: 25 + 3 + 12, files: 14 + 2, file_lines: 25 + 3 + 12 });

    // Output and error files hold no lines of their own: 14 input files, 2 made by the ended batch.
    expect(await h.cp.batchPurger.run()).toEqual({ batches: 14, files: 16 });
    expect(await counts(old.project)).toEqual({ batches: 0, lines: 0, files: 0, file_lines: 0 });
    expect(await counts(recent.project)).toEqual(before.recent);
    expect(await counts(live.project)).toEqual(before.live);
    expect(await h.cp.batchPurger.run()).toEqual({ batches: 0, files: 0 });
    expect((await h.api('GET', `/v1/projects/${live.project}/batches`, { token: h.adminToken })).body.data).toHaveLength(2);
  });
});
