import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisKeys } from '@gateway/shared';
import { ctlInProcess } from './ctl-in-process.js';
import { startHarness, type Harness } from './harness.js';

/**
 * Stored responses (migration 0020) through the internal routes the proxies use: written, read
 * and deleted with the internal token only, each of one project for good (another project's id is
 * 404 to read or delete and 409 to write), kept for the project's `responses.ttl_days` (30 days
 * unset), never answered once expired and purged by the control plane, gone with their project.
 */
const TOKEN = 'internal-token-for-the-stored-responses-test';
let h: Harness;
let dir: string;

beforeAll(async () => {
  h = await startHarness('stored-responses', { env: { INTERNAL_TOKEN: TOKEN } });
  dir = mkdtempSync(join(tmpdir(), 'stored-responses-'));
});
afterAll(async () => {
  await h?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

const internal = (method: string, path: string, body?: unknown, token: string | null = TOKEN) =>
  h.api(method, path, { token, ...(body === undefined ? {} : { body }) });

async function newProject(name: string, extra: Record<string, unknown> = {}): Promise<string> {
  const created = await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name, ...extra } });
  expect(created.status, created.text).toBe(201);
  return created.body.id as string;
}

let n = 0;
const newId = () => `resp_test${Date.now().toString(36)}_${n++}`;

function write(projectId: string, extra: Record<string, unknown> = {}) {
  return {
    v: 1,
    project_id: projectId,
    provider: null,
    model: 'gpt-4o-mini',
    input_items: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hello' }] }],
    response: { id: 'resp_x', object: 'response', status: 'completed', output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hi!', annotations: [] }] }] },
    messages: [
      { role: 'user', content: 'Hello' },
      { role: 'assistant', content: 'Hi!' },
    ],
    ...extra,
  };
}

const get = (id: string, projectId: string, token: string | null = TOKEN) => internal('GET', `/internal/v1/responses/${id}?project_id=${projectId}`, undefined, token);
const del = (id: string, projectId: string, token: string | null = TOKEN) => internal('DELETE', `/internal/v1/responses/${id}?project_id=${projectId}`, undefined, token);
const put = (id: string, body: unknown, token: string | null = TOKEN) => internal('PUT', `/internal/v1/responses/${id}`, body, token);

describe('the internal stored-responses routes', () => {
  it('store, answer, replace and delete a response', async () => {
    const project = await newProject('stored-roundtrip');
    const id = newId();
    const body = write(project);
    const stored = await put(id, body);
    expect(stored.status, stored.text).toBe(204);
    expect(stored.text).toBe('');

    const read = await get(id, project);
    expect(read.status, read.text).toBe(200);
    expect(read.body).toEqual({
      v: 1,
      id,
      project_id: project,
      provider: null,
      model: 'gpt-4o-mini',
      input_items: body.input_items,
      response: body.response,
      messages: body.messages,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      expires_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });

    // A provider-stored response: only where it lives.
    const replaced = await put(id, write(project, { provider: 'openai', model: 'gpt-5', response: null, messages: null, input_items: [] }));
    expect(replaced.status, replaced.text).toBe(204);
    expect((await get(id, project)).body).toMatchObject({ provider: 'openai', model: 'gpt-5', input_items: [], response: null, messages: null });

    expect((await del(id, project)).status).toBe(204);
    const gone = await get(id, project);
    expect(gone.status).toBe(404);
    expect(gone.body.error).toMatchObject({ code: 'NOT_FOUND', param: 'id' });
    expect((await del(id, project)).status).toBe(404);
  });

  it('answer the items of kept responses by id, the latest write of an id winning, for their project only', async () => {
    const project = await newProject('items');
    const stranger = await newProject('items-other');
    const id = newId();
    const userItem = { id: 'msg_in1', type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hello' }] };
    const answer = { id: 'msg_out1', type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hi!', annotations: [] }] };
    const call = { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}' };
    expect((await put(id, write(project, { input_items: [userItem, { type: 'message', role: 'user', content: 'no id' }], response: { id, object: 'response', output: [answer, call] } }))).status).toBe(204);
    const items = (ids: string[], projectId = project) => internal('GET', `/internal/v1/responses/items?project_id=${projectId}&${ids.map((i) => `id=${i}`).join('&')}`);

    const found = await items(['msg_in1', 'msg_out1', 'fc_1', 'msg_nope']);
    expect(found.status, found.text).toBe(200);
    expect(found.body).toEqual({ v: 1, items: { msg_in1: userItem, msg_out1: answer, fc_1: call } });
    expect((await items(['msg_out1'])).body.items).toEqual({ msg_out1: answer });
    expect((await items(['msg_out1'], stranger)).body.items).toEqual({});

    // A later response carrying the same item (replayed as input) is where the id points now; deleting it takes the item along.
    const later = newId();
    const edited = { ...answer, content: [{ type: 'output_text', text: 'Hi again!', annotations: [] }] };
    expect((await put(later, write(project, { input_items: [edited], response: { id: later, object: 'response', output: [] } }))).status).toBe(204);
    expect((await items(['msg_out1'])).body.items).toEqual({ msg_out1: edited });
    expect((await del(later, project)).status).toBe(204);
    expect((await items(['msg_out1', 'fc_1'])).body.items).toEqual({ fc_1: call });
    expect((await internal('GET', `/internal/v1/responses/items?project_id=${project}`)).status).toBe(400);
  });

  it('refuse callers without the internal token, before reading a body', async () => {
    const project = await newProject('stored-token');
    const id = newId();
    expect((await put(id, write(project))).status).toBe(204);
    for (const token of [null, 'not-the-token', h.adminToken]) {
      for (const res of [await get(id, project, token), await del(id, project, token), await put(id, write(project), token), await put(id, { nonsense: true }, token)]) {
        expect(res.status).toBe(401);
        expect(res.body.error).toMatchObject({ code: 'UNAUTHORIZED', message: 'This route needs the internal token of the deployment.' });
      }
    }
    const basic = await h.api('GET', `/internal/v1/responses/${id}?project_id=${project}`, { headers: { authorization: `Basic ${TOKEN}` } });
    expect(basic.status).toBe(401);
    // Nothing was deleted by the refused DELETEs.
    expect((await get(id, project)).status).toBe(200);
  });

  it("answer another project's id as absent, and refuse to move it", async () => {
    const owner = await newProject('stored-owner');
    const other = await newProject('stored-other');
    const id = newId();
    expect((await put(id, write(owner))).status).toBe(204);

    expect((await get(id, other)).status).toBe(404);
    expect((await del(id, other)).status).toBe(404);
    const moved = await put(id, write(other, { model: 'stolen' }));
    expect(moved.status).toBe(409);
    expect(moved.body.error).toMatchObject({ code: 'CONFLICT', param: 'id' });

    const kept = await get(id, owner);
    expect(kept.status).toBe(200);
    expect(kept.body).toMatchObject({ project_id: owner, model: 'gpt-4o-mini' });
  });

  it('refuse a project that does not exist or was deleted', async () => {
    const missing = await put(newId(), write(randomUUID()));
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: 'NOT_FOUND', param: 'project_id' });

    const project = await newProject('stored-soon-deleted');
    expect((await h.api('DELETE', `/v1/projects/${project}`, { token: h.adminToken })).status).toBe(204);
    expect((await put(newId(), write(project))).status).toBe(404);
  });

  it('keep a response for the project setting, 30 days when unset', async () => {
    const plain = await newProject('stored-ttl-default');
    const short = await newProject('stored-ttl-short', { responses: { ttl_days: 2 } });
    const days = async (projectId: string) => {
      const id = newId();
      expect((await put(id, write(projectId))).status).toBe(204);
      const { created_at, expires_at } = (await get(id, projectId)).body as { created_at: string; expires_at: string };
      return (Date.parse(expires_at) - Date.parse(created_at)) / 86_400_000;
    };
    expect(await days(plain)).toBeCloseTo(30, 6);
    expect(await days(short)).toBeCloseTo(2, 6);

    // Set afterwards: responses stored from then on get the new life.
    expect((await h.api('PATCH', `/v1/projects/${plain}`, { token: h.adminToken, body: { responses: { ttl_days: 3650 } } })).status).toBe(200);
    expect(await days(plain)).toBeCloseTo(3650, 6);
    expect((await h.api('PATCH', `/v1/projects/${plain}`, { token: h.adminToken, body: { responses: null } })).status).toBe(200);
    expect(await days(plain)).toBeCloseTo(30, 6);
  });

  it('never answer an expired response, and purge it', async () => {
    const project = await newProject('stored-expiry');
    const expired = newId();
    const live = newId();
    expect((await put(expired, write(project))).status).toBe(204);
    expect((await put(live, write(project))).status).toBe(204);
    await h.sql`update stored_responses set expires_at = now() - interval '1 second' where id = ${expired}`;

    expect((await get(expired, project)).status).toBe(404);
    expect((await del(expired, project)).status).toBe(404);
    expect(await h.cp.storedResponsePurger.run()).toBeGreaterThanOrEqual(1);
    expect(await h.sql`select id from stored_responses where id = ${expired}`).toHaveLength(0);
    expect(await h.sql`select id from stored_responses where id = ${live}`).toHaveLength(1);
    expect((await get(live, project)).status).toBe(200);
  });

  it('purge in batches: a backlog larger than one batch goes in one pass', async () => {
    const project = await newProject('stored-backlog');
    await h.sql`
      insert into stored_responses (id, project_id, model, input_items, expires_at)
      select 'resp_backlog_' || i, ${project}, 'm', '[]'::jsonb, now() - interval '1 minute'
      from generate_series(1, 2500) as i`;
    expect(await h.cp.storedResponsePurger.run()).toBe(2500);
    expect(await h.sql`select id from stored_responses where project_id = ${project}`).toHaveLength(0);
  });

  it("delete a project's responses with the project", async () => {
    const project = await newProject('stored-deleted-project');
    const other = await newProject('stored-survivor');
    const ids = [newId(), newId()];
    for (const id of ids) expect((await put(id, write(project))).status).toBe(204);
    const kept = newId();
    expect((await put(kept, write(other))).status).toBe(204);

    expect((await h.api('DELETE', `/v1/projects/${project}`, { token: h.adminToken })).status).toBe(204);
    expect(await h.sql`select id from stored_responses where project_id = ${project}`).toHaveLength(0);
    for (const id of ids) expect((await get(id, project)).status).toBe(404);
    expect((await get(kept, other)).status).toBe(200);

    // The foreign key cascades too, should a project row ever be removed for good.
    await h.sql`delete from projects where id = ${other}`;
    expect(await h.sql`select id from stored_responses where id = ${kept}`).toHaveLength(0);
  });

  it('refuse bad bodies, ids and queries with 400', async () => {
    const project = await newProject('stored-bad');
    const id = newId();
    const good = write(project);
    const { messages: _messages, ...withoutMessages } = good;
    const bad: [string, unknown, string | null][] = [
      ['no v', { ...good, v: undefined }, 'v'],
      ['v 2', { ...good, v: 2 }, 'v'],
      ['project id not a uuid', { ...good, project_id: 'p1' }, 'project_id'],
      ['no model', { ...good, model: '' }, 'model'],
      ['input_items not an array', { ...good, input_items: {} }, 'input_items'],
      ['response an array', { ...good, response: [] }, 'response'],
      ['messages a string', { ...good, messages: 'hi' }, 'messages'],
      ['messages missing', withoutMessages, 'messages'],
      ['an unknown field', { ...good, extra: 1 }, 'extra'],
      ['provider a number', { ...good, provider: 7 }, 'provider'],
      ['U+0000 in a text', { ...good, input_items: [{ type: 'message', content: 'a\u0000b' }] }, 'input_items.0.content'],
    ];
    for (const [what, body, param] of bad) {
      const res = await put(id, JSON.parse(JSON.stringify(body)));
      expect(res.status, what).toBe(400);
      expect(res.body.error, what).toMatchObject({ code: 'INVALID_REQUEST', param });
    }
    expect((await h.api('PUT', `/internal/v1/responses/${id}`, { token: TOKEN, rawBody: '{"v":1,' })).status).toBe(400);
    expect((await h.api('PUT', `/internal/v1/responses/${id}`, { token: TOKEN })).status).toBe(400);
    // A lone surrogate: JSON, but not text PostgreSQL stores.
    const surrogate = await h.api('PUT', `/internal/v1/responses/${id}`, { token: TOKEN, rawBody: JSON.stringify(good).replace('Hello', '\\ud800') });
    expect(surrogate.status, surrogate.text).toBe(400);

    const longest = `resp_${'a'.repeat(200)}`;
    expect((await put(longest, good)).status).toBe(204);
    expect((await get(longest, project)).body.id).toBe(longest);
    for (const badId of ['msg_1', 'resp_', `resp_${'a'.repeat(201)}`, 'resp_a.b']) {
      expect((await put(badId, good)).status, badId).toBe(400);
      expect((await get(badId, project)).status, badId).toBe(400);
    }
    expect((await internal('GET', `/internal/v1/responses/${id}`)).status).toBe(400);
    expect((await internal('GET', `/internal/v1/responses/${id}?project_id=nope`)).status).toBe(400);
    expect((await internal('DELETE', `/internal/v1/responses/${id}`)).status).toBe(400);
    expect(await h.sql`select id from stored_responses where id = ${id}`).toHaveLength(0);
  });

  it('take large and deeply nested bodies', async () => {
    const project = await newProject('stored-large');
    const id = newId();
    // About 8 MiB of text, and a tool schema nested 100 levels deep (more than other bodies may).
    let nested: unknown = { type: 'string' };
    for (let i = 0; i < 50; i++) nested = { type: 'object', properties: { a: nested } };
    const body = write(project, {
      input_items: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'x'.repeat(8 * 1024 * 1024) }] }],
      response: { id, object: 'response', tools: [{ type: 'function', name: 'f', parameters: nested }] },
    });
    const stored = await put(id, body);
    expect(stored.status, stored.text.slice(0, 200)).toBe(204);
    const read = await get(id, project);
    expect(read.status).toBe(200);
    expect(read.body.input_items).toEqual(body.input_items);
    expect(read.body.response).toEqual(body.response);

    const tooLarge = await h.api('PUT', `/internal/v1/responses/${id}`, { token: TOKEN, rawBody: JSON.stringify(write(project, { input_items: ['x'.repeat(33 * 1024 * 1024)] })) });
    expect(tooLarge.status).toBe(413);
  });
});

describe('the project setting responses', () => {
  it('is 30 days by default, set and reset by POST and PATCH, validated, and not projected', async () => {
    const created = await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: 'responses-setting' } });
    expect(created.body.responses).toEqual({ ttl_days: 30 });
    const id = created.body.id as string;
    const [row] = await h.sql`select responses_ttl_days from projects where id = ${id}`;
    expect(row!.responses_ttl_days).toBeNull();

    const set = await h.api('PATCH', `/v1/projects/${id}`, { token: h.adminToken, body: { responses: { ttl_days: 7 } } });
    expect(set.status).toBe(200);
    expect(set.body.responses).toEqual({ ttl_days: 7 });
    expect((await h.api('GET', `/v1/projects/${id}`, { token: h.adminToken })).body.responses).toEqual({ ttl_days: 7 });
    const listed = (await h.api('GET', '/v1/projects', { token: h.adminToken })).body.data.find((p: { id: string }) => p.id === id);
    expect(listed.responses).toEqual({ ttl_days: 7 });
    // Applied by the control plane when it stores: the proxies' policy does not carry it.
    const policy = await h.redis.get(new RedisKeys(h.prefix).projectPolicy(id));
    expect(policy).toContain(id);
    expect(policy).not.toContain('ttl_days');

    for (const [body, param] of [
      [{ responses: { ttl_days: 0 } }, 'responses.ttl_days'],
      [{ responses: { ttl_days: 3651 } }, 'responses.ttl_days'],
      [{ responses: { ttl_days: 1.5 } }, 'responses.ttl_days'],
      [{ responses: { ttl_days: '7' } }, 'responses.ttl_days'],
      [{ responses: {} }, 'responses.ttl_days'],
      [{ responses: { ttl_days: 7, store: false } }, 'responses.store'],
      [{ responses: 30 }, 'responses'],
    ] as const) {
      const res = await h.api('PATCH', `/v1/projects/${id}`, { token: h.adminToken, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error, JSON.stringify(body)).toMatchObject({ code: 'INVALID_REQUEST', param });
    }
    await expect(h.sql`update projects set responses_ttl_days = 0 where id = ${id}`).rejects.toThrow(/check/);

    const reset = await h.api('PATCH', `/v1/projects/${id}`, { token: h.adminToken, body: { responses: null } });
    expect(reset.body.responses).toEqual({ ttl_days: 30 });
    const withSetting = await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: 'responses-setting-2', responses: { ttl_days: 1 } } });
    expect(withSetting.status).toBe(201);
    expect(withSetting.body.responses).toEqual({ ttl_days: 1 });
  });
});

describe('the internal routes and the OpenAPI document', () => {
  it('leaves the internal routes out, and describes the project setting', async () => {
    const doc = (await h.api('GET', '/openapi.json')).body;
    expect(Object.keys(doc.paths).filter((path) => path.startsWith('/internal'))).toEqual([]);
    const project = doc.components.schemas.Project;
    expect(project.required).toContain('responses');
    const body = (path: string, method: string) => doc.paths[path][method].requestBody.content['application/json'].schema;
    for (const [path, method] of [['/v1/projects', 'post'], ['/v1/projects/{id}', 'patch']] as const) {
      expect(body(path, method).properties.responses.properties.ttl_days, `${method} ${path}`).toMatchObject({ minimum: 1, maximum: 3650 });
    }
  });
});

describe('gatewayctl --responses-ttl-days', () => {
  const ctl = (args: string[]) => ctlInProcess(h, dir, args);

  it('sets the field on create and update, puts the default back, and refuses a non-number', async () => {
    const created = await ctl(['projects', 'create', 'cli-responses', '--responses-ttl-days', '90']);
    expect(created.code, created.stderr).toBe(0);
    const project = JSON.parse(created.stdout);
    expect(project.responses).toEqual({ ttl_days: 90 });

    const reset = await ctl(['projects', 'update', 'cli-responses', '--responses-ttl-days', 'default']);
    expect(reset.code, reset.stderr).toBe(0);
    expect(JSON.parse(reset.stdout).responses).toEqual({ ttl_days: 30 });

    const bad = await ctl(['projects', 'update', 'cli-responses', '--responses-ttl-days', 'forever']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--responses-ttl-days takes a whole number of at least 1, not "forever"');
    const tooLong = await ctl(['projects', 'update', 'cli-responses', '--responses-ttl-days', '3651']);
    expect(tooLong.code).toBe(1);
    expect(tooLong.stderr).toContain('responses.ttl_days');
  });
});
