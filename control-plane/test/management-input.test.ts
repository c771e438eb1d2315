import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './harness.js';

/** What the management API accepts at its edge: bodies (or none), names, and text PostgreSQL can store. */
let h: Harness;
beforeAll(async () => {
  h = await startHarness('mgmt-input');
});
afterAll(async () => h?.close());

const JSON_TYPE = { 'content-type': 'application/json' };
/** An empty body with content-length: 0, as axios, requests and many SDKs send a DELETE. */
const EMPTY_JSON = { headers: JSON_TYPE, rawBody: '' };

/** Names are unique per account: the default one gets a number. */
let projects = 0;
async function newProject(name = `input ${++projects}`) {
  const res = await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name } });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; name: string };
}

async function newKey(projectId: string) {
  const res = await h.api('POST', `/v1/projects/${projectId}/keys`, { token: h.adminToken, body: { name: 'k' } });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; name: string };
}

describe('requests without a body', () => {
  it('are accepted on body-less routes when they carry content-type: application/json, as many clients send it', async () => {
    const project = await newProject();
    const key = await newKey(project.id);
    const member = await h.createUser();
    expect((await h.api('POST', `/v1/projects/${project.id}/members`, { token: h.adminToken, body: { user_id: member.id, role: 'viewer' } })).status).toBe(201);

    const get = await h.api('GET', `/v1/projects/${project.id}`, { token: h.adminToken, headers: JSON_TYPE });
    expect(get.status, get.text).toBe(200);
    expect((await h.api('GET', '/v1/audit?limit=1', { token: h.adminToken, headers: JSON_TYPE })).status).toBe(200);

    const deleteKey = await h.api('DELETE', `/v1/projects/${project.id}/keys/${key.id}`, { token: h.adminToken, ...EMPTY_JSON });
    expect(deleteKey.status, deleteKey.text).toBe(204);
    const removeMember = await h.api('DELETE', `/v1/projects/${project.id}/members/${member.id}`, { token: h.adminToken, ...EMPTY_JSON });
    expect(removeMember.status, removeMember.text).toBe(204);
    const deleteProject = await h.api('DELETE', `/v1/projects/${project.id}`, { token: h.adminToken, rawBody: '', headers: { 'content-type': 'application/json; charset=utf-8' } });
    expect(deleteProject.status, deleteProject.text).toBe(204);
    expect((await h.api('GET', `/v1/projects/${project.id}`, { token: h.adminToken })).status).toBe(404);
  });

  it('still get a clear 400 on routes that need a body, whether it is empty or missing', async () => {
    const project = await newProject();
    const cases: [string, string][] = [
      ['POST', '/v1/projects'],
      ['PATCH', `/v1/projects/${project.id}`],
      ['POST', `/v1/projects/${project.id}/keys`],
      ['POST', `/v1/projects/${project.id}/members`],
      ['POST', '/v1/users'],
    ];
    for (const [method, path] of cases) {
      for (const options of [EMPTY_JSON, { headers: JSON_TYPE }, {}]) {
        const res = await h.api(method, path, { token: h.adminToken, ...options });
        expect(res.status, `${method} ${path} ${JSON.stringify(options)}`).toBe(400);
        expect(res.body.error).toMatchObject({ code: 'INVALID_REQUEST', message: 'The body is empty; send a JSON object.' });
      }
    }
    // Sign-in (the refresh grant too) takes a body.
    const signin = await h.api('POST', '/v1/signins', { token: h.adminToken, ...EMPTY_JSON });
    expect(signin.status).toBe(400);
    expect(signin.body.error.message).toBe('The body is empty; send a JSON object.');
    // A body that is there but not JSON is still that, not "empty".
    const broken = await h.api('POST', '/v1/projects', { token: h.adminToken, rawBody: '   ' });
    expect(broken.status).toBe(400);
    expect(broken.body.error.message).toBe('The body is not valid JSON.');
  });

  it('leaves the JSON parser its limits: size and prototype poisoning', async () => {
    const huge = await h.api('POST', '/v1/projects', { token: h.adminToken, rawBody: JSON.stringify({ name: 'x'.repeat(1024 * 1024) }) });
    expect(huge.status).toBe(413);
    expect(huge.body.error.code).toBe('PAYLOAD_TOO_LARGE');
    const poisoned = await h.api('POST', '/v1/projects', { token: h.adminToken, rawBody: '{"name":"p","__proto__":{"admin":true}}' });
    expect(poisoned.status).toBe(400);
    expect(poisoned.body.error.code).toBe('INVALID_REQUEST');
  });
});

describe('names', () => {
  it('are trimmed, for projects (created and renamed) and keys', async () => {
    const project = await newProject('  Alpha  ');
    expect(project.name).toBe('Alpha');
    const renamed = await h.api('PATCH', `/v1/projects/${project.id}`, { token: h.adminToken, body: { name: '\u00a0Beta\t' } });
    expect(renamed.body.name).toBe('Beta');
    const key = await h.api('POST', `/v1/projects/${project.id}/keys`, { token: h.adminToken, body: { name: ' ci  key ' } });
    expect(key.body.name).toBe('ci  key');
    const [row] = await h.sql`select name from projects where id = ${project.id}`;
    expect(row?.name).toBe('Beta');
    // 100 characters (not UTF-16 units) after trimming is the limit.
    const emoji = '😀'.repeat(100);
    expect((await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: ` ${emoji} ` } })).body.name).toBe(emoji);
  });

  it('are refused with a 400 naming the field when empty, too long, or holding control or bidirectional characters', async () => {
    const project = await newProject();
    const bad = [
      '',
      '   ',
      '\n\t',
      'x'.repeat(101),
      'a\u0000b',
      'line\nbreak',
      'tab\there',
      'del\u007f',
      'c1\u0085',
      'txt\u202Eexe.doc',
      'lrm\u200E',
      'rlm\u200F',
      'embed\u202A',
      'isolate\u2066',
      'pop\u2069',
      'arabic\u061Cmark',
      'line\u2028separator',
    ];
    const targets: [string, string][] = [
      ['POST', '/v1/projects'],
      ['PATCH', `/v1/projects/${project.id}`],
      ['POST', `/v1/projects/${project.id}/keys`],
    ];
    for (const [method, path] of targets) {
      for (const name of bad) {
        const res = await h.api(method, path, { token: h.adminToken, body: { name } });
        const where = `${method} ${path} ${JSON.stringify(name)}`;
        expect(res.status, where).toBe(400);
        expect(res.body.error.code, where).toBe('INVALID_REQUEST');
        expect(res.body.error.param, where).toBe('name');
        expect(res.body.error.message, where).toMatch(/^body\.name must /);
      }
    }
    expect((await h.api('GET', `/v1/projects/${project.id}`, { token: h.adminToken })).body.name).toBe(project.name);
    const [{ count }] = (await h.sql`select count(*)::int as count from api_keys where project_id = ${project.id}`) as unknown as [{ count: number }];
    expect(count).toBe(0);
  });
});

describe('text PostgreSQL cannot store', () => {
  it('is refused with a 4xx in every field that would reach the database, never a 500', async () => {
    const project = await newProject();
    const nul = 'a\u0000b';
    const q = encodeURIComponent(nul);
    const bodies: [string, string, unknown, string | null][] = [
      ['POST', '/v1/projects', { name: nul }, 'name'],
      ['POST', '/v1/projects', { name: 'ok', allowed_models: ['gpt', nul] }, 'allowed_models.1'],
      ['PATCH', `/v1/projects/${project.id}`, { name: nul }, 'name'],
      ['PATCH', `/v1/projects/${project.id}`, { allowed_models: [nul] }, 'allowed_models.0'],
      ['POST', `/v1/projects/${project.id}/keys`, { name: nul }, 'name'],
      ['POST', `/v1/projects/${project.id}/keys`, { name: 'ok', expires_at: `2999-01-01T00:00:00Z${'\u0000'}` }, 'expires_at'],
      ['POST', `/v1/projects/${project.id}/members`, { user_id: nul, role: 'viewer' }, 'user_id'],
      ['POST', '/v1/users', { email: `x${nul}@example.test`, password: 'long enough password' }, 'email'],
      ['POST', '/v1/signins', { grant_type: 'password', email: `x${nul}@example.test`, password: 'whatever' }, 'email'],
      ['POST', '/v1/projects', { name: 'ok', [nul]: 1 }, nul],
    ];
    for (const [method, path, body, param] of bodies) {
      const res = await h.api(method, path, { token: h.adminToken, body });
      const where = `${method} ${path} ${JSON.stringify(body)}`;
      expect(res.status, where).toBe(400);
      expect(res.body.error.code, where).toBe('INVALID_REQUEST');
      expect(res.body.error.param, where).toBe(param);
    }
    for (const list of ['usage', 'audit']) {
      for (const param of ['model', 'provider', 'cursor', 'key_id', 'project_id', ...(list === 'audit' ? ['type'] : ['finish_reason'])]) {
        const res = await h.api('GET', `/v1/${list}?${param}=${q}`, { token: h.adminToken });
        expect(res.status, `${list} ${param}`).toBe(400);
        expect(res.body.error.param, `${list} ${param}`).toBe(param);
      }
    }
    for (const path of [`/v1/projects/${q}`, `/v1/projects/${project.id}/keys/${q}`]) {
      const res = await h.api('DELETE', path, { token: h.adminToken });
      expect(res.status, path).toBe(400);
    }
    expect((await h.api('GET', `/v1/projects/${project.id}`, { token: h.adminToken })).status).toBe(200);
  });
});
