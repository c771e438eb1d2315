import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness('projects');
});
afterAll(async () => h?.close());

type User = Awaited<ReturnType<Harness['createUser']>>;

async function project(token: string, name = 'project', quota: number | null = 1000) {
  const res = await h.api('POST', '/v1/projects', { token, body: { name, quota_tokens: quota } });
  expect(res.status).toBe(201);
  return res.body as { id: string; name: string };
}

async function addMember(token: string, projectId: string, userId: string, role: string, expected = 201) {
  const res = await h.api('POST', `/v1/projects/${projectId}/members`, { token, body: { user_id: userId, role } });
  expect(res.status, res.text).toBe(expected);
  return res;
}

describe('users', () => {
  it('are created by account admins only, one per email whatever its case', async () => {
    const res = await h.api('POST', '/v1/users', { token: h.adminToken, body: { email: 'Jo@Example.test', password: 'long enough!', role: 'member' } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.any(String), email: 'Jo@Example.test', role: 'member', disabled: false, created_at: expect.any(String) });
    expect(res.body).not.toHaveProperty('password_hash');
    const again = await h.api('POST', '/v1/users', { token: h.adminToken, body: { email: 'jo@example.TEST', password: 'long enough!' } });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('CONFLICT');

    const member = await h.createUser('member');
    const refused = await h.api('POST', '/v1/users', { token: member.token, body: { email: 'x@example.test', password: 'long enough!' } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('FORBIDDEN');

    const defaulted = await h.api('POST', '/v1/users', { token: h.adminToken, body: { email: 'def@example.test', password: 'long enough!' } });
    expect(defaulted.body.role).toBe('member');
    for (const body of [
      { email: 'not-an-email', password: 'long enough!' },
      { email: 'y@example.test', password: 'short' },
      { email: 'y@example.test', password: 'long enough!', role: 'root' },
    ]) {
      expect((await h.api('POST', '/v1/users', { token: h.adminToken, body })).status).toBe(400);
    }
    const created = await h.sql`select actor from audit_events where type = 'user.created' and outcome = 'success'`;
    expect(new Set(created.map((r) => r.actor))).toEqual(new Set([h.adminId]));
    const [blocked] = await h.sql`select outcome, status from audit_events where type = 'user.created' and actor = ${member.id}`;
    expect(blocked).toEqual({ outcome: 'policy_blocked', status: 403 });
  });
});

describe('projects', () => {
  it('are created with the creator as owner, read, changed and soft-deleted', async () => {
    const owner = await h.createUser();
    const created = await h.api('POST', '/v1/projects', { token: owner.token, body: { name: 'Alpha', quota_tokens: 5000 } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      name: 'Alpha',
      quota_tokens: 5000,
      quota_period: 'total',
      used_tokens: 0,
      rate_limits: { key_rpm: null, key_tpm: null, project_rpm: null, project_tpm: null },
      allowed_models: null,
      max_tokens_cap: null,
      mcp: null,
      cache: { mode: 'off', ttl_seconds: 3600 },
      unsupported_params: 'drop',
      responses: { ttl_days: 30 },
      created_at: expect.any(String),
    });
    const id = created.body.id as string;

    const members = await h.api('GET', `/v1/projects/${id}/members`, { token: owner.token });
    expect(members.body.data).toEqual([expect.objectContaining({ user_id: owner.id, email: owner.email, role: 'owner' })]);
    expect((await h.api('GET', `/v1/projects/${id}`, { token: owner.token })).body).toEqual(created.body);

    const patched = await h.api('PATCH', `/v1/projects/${id}`, { token: owner.token, body: { name: 'Alpha 2', quota_tokens: null } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id, name: 'Alpha 2', quota_tokens: null });
    expect((await h.api('PATCH', `/v1/projects/${id}`, { token: owner.token, body: { quota_tokens: 7 } })).body).toMatchObject({ name: 'Alpha 2', quota_tokens: 7 });

    const noQuota = await h.api('POST', '/v1/projects', { token: owner.token, body: { name: 'Unmetered' } });
    expect(noQuota.body.quota_tokens).toBeNull();

    expect((await h.api('DELETE', `/v1/projects/${id}`, { token: owner.token })).status).toBe(204);
    expect((await h.api('GET', `/v1/projects/${id}`, { token: owner.token })).status).toBe(404);
    expect((await h.api('DELETE', `/v1/projects/${id}`, { token: owner.token })).status).toBe(404);
    const list = await h.api('GET', '/v1/projects', { token: owner.token });
    expect(list.body.data.map((p: { id: string }) => p.id)).toEqual([noQuota.body.id]);
    const [row] = await h.sql`select deleted_at from projects where id = ${id}`;
    expect(row?.deleted_at).not.toBeNull();

    const events = await h.sql`select type, outcome from audit_events where project_id = ${id} and actor = ${owner.id} order by ts, id`;
    expect(events.map((r) => `${r.type} ${r.outcome}`)).toEqual([
      'project.created success',
      'project.updated success',
      'project.updated success',
      'project.deleted success',
      'project.deleted error',
    ]);
  });

  it('validate their bodies strictly', async () => {
    const cases: [unknown, string][] = [
      [{}, 'body.name is required'],
      [{ name: '' }, 'body.name must not be empty or only spaces'],
      [{ name: 42 }, 'body.name must be string'],
      [{ name: 'x', quota_tokens: '100' }, 'body.quota_tokens must be integer or null'],
      [{ name: 'x', quota_tokens: -1 }, 'body.quota_tokens must be >= 0'],
      [{ name: 'x', quota_tokens: 1.5 }, 'body.quota_tokens must be integer or null'],
      [{ name: 'x', owner: 'me' }, 'body.owner is not a known field'],
      [['x'], 'body must be object'],
    ];
    for (const [body, message] of cases) {
      const res = await h.api('POST', '/v1/projects', { token: h.adminToken, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_REQUEST', type: 'invalid_request_error', message });
    }
    const p = await project(h.adminToken);
    expect((await h.api('PATCH', `/v1/projects/${p.id}`, { token: h.adminToken, body: {} })).status).toBe(400);
    expect((await h.api('GET', '/v1/projects/not-a-uuid', { token: h.adminToken })).body.error.message).toBe('params.id must match format "uuid"');
    expect((await h.api('POST', '/v1/projects', { token: h.adminToken, rawBody: '{nope' })).body.error.code).toBe('INVALID_REQUEST');
    const put = await h.api('PUT', `/v1/projects/${p.id}`, { token: h.adminToken, body: { name: 'x' } });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, PATCH, DELETE');
  });

  it('are listed per caller; account admins see them all', async () => {
    const a = await h.createUser();
    const b = await h.createUser();
    const pa = await project(a.token, 'of a');
    const pb = await project(b.token, 'of b');
    const ids = async (token: string) => (await h.api('GET', '/v1/projects', { token })).body.data.map((p: { id: string }) => p.id);
    expect(await ids(a.token)).toEqual([pa.id]);
    expect(await ids(b.token)).toEqual([pb.id]);
    expect(await ids(h.adminToken)).toEqual(expect.arrayContaining([pa.id, pb.id]));
  });
});

describe('project roles', () => {
  let owner: User, admin: User, member: User, viewer: User, outsider: User;
  let p: { id: string };
  beforeAll(async () => {
    [owner, admin, member, viewer, outsider] = await Promise.all([h.createUser(), h.createUser(), h.createUser(), h.createUser(), h.createUser()]);
    p = await project(owner.token, 'roles');
    await addMember(owner.token, p.id, admin.id, 'admin');
    await addMember(owner.token, p.id, member.id, 'member');
    await addMember(owner.token, p.id, viewer.id, 'viewer');
  });

  const status = async (user: User, method: string, path: string, body?: unknown) => (await h.api(method, path, { token: user.token, body })).status;

  it('viewers read and nothing more', async () => {
    expect(await status(viewer, 'GET', `/v1/projects/${p.id}`)).toBe(200);
    expect(await status(viewer, 'GET', `/v1/projects/${p.id}/keys`)).toBe(200);
    expect(await status(viewer, 'GET', `/v1/projects/${p.id}/members`)).toBe(200);
    expect(await status(viewer, 'GET', `/v1/usage?project_id=${p.id}`)).toBe(200);
    expect(await status(viewer, 'GET', `/v1/audit?project_id=${p.id}`)).toBe(200);
    expect(await status(viewer, 'POST', `/v1/projects/${p.id}/keys`, { name: 'k' })).toBe(403);
    expect(await status(viewer, 'PATCH', `/v1/projects/${p.id}`, { name: 'x' })).toBe(403);
    expect(await status(viewer, 'POST', `/v1/projects/${p.id}/members`, { user_id: outsider.id, role: 'viewer' })).toBe(403);
    expect(await status(viewer, 'DELETE', `/v1/projects/${p.id}/members/${member.id}`)).toBe(403);
    expect(await status(viewer, 'DELETE', `/v1/projects/${p.id}`)).toBe(403);
    // Refusals are in the project's audit trail, with who tried.
    const refused = await h.sql`select type, outcome, status, error_code from audit_events where actor = ${viewer.id} and outcome <> 'success' order by ts, id`;
    expect(refused.map((r) => r.type)).toEqual(['key.created', 'project.updated', 'member.added', 'member.removed', 'project.deleted']);
    expect(new Set(refused.map((r) => `${r.outcome} ${r.status} ${r.error_code}`))).toEqual(new Set(['policy_blocked 403 FORBIDDEN']));
  });

  it('members create keys and delete only their own', async () => {
    const own = await h.api('POST', `/v1/projects/${p.id}/keys`, { token: member.token, body: { name: 'mine' } });
    expect(own.status).toBe(201);
    const owners = await h.api('POST', `/v1/projects/${p.id}/keys`, { token: owner.token, body: { name: 'owners' } });
    expect(await status(member, 'DELETE', `/v1/projects/${p.id}/keys/${owners.body.id}`)).toBe(403);
    expect(await status(viewer, 'DELETE', `/v1/projects/${p.id}/keys/${own.body.id}`)).toBe(403);
    expect(await status(member, 'DELETE', `/v1/projects/${p.id}/keys/${own.body.id}`)).toBe(204);
    expect(await status(member, 'PATCH', `/v1/projects/${p.id}`, { quota_tokens: 1 })).toBe(403);
    expect(await status(member, 'POST', `/v1/projects/${p.id}/members`, { user_id: outsider.id, role: 'viewer' })).toBe(403);
    // Project admins delete anyone's key.
    expect(await status(admin, 'DELETE', `/v1/projects/${p.id}/keys/${owners.body.id}`)).toBe(204);
  });

  it('admins manage quotas and members but not owners, and cannot delete the project', async () => {
    expect(await status(admin, 'PATCH', `/v1/projects/${p.id}`, { quota_tokens: 99 })).toBe(200);
    expect(await status(admin, 'POST', `/v1/projects/${p.id}/members`, { user_id: outsider.id, role: 'viewer' })).toBe(201);
    const changed = await addMember(admin.token, p.id, outsider.id, 'member', 200);
    expect(changed.body).toMatchObject({ project_id: p.id, user_id: outsider.id, role: 'member' });
    expect(await status(admin, 'DELETE', `/v1/projects/${p.id}/members/${outsider.id}`)).toBe(204);
    expect(await status(admin, 'DELETE', `/v1/projects/${p.id}/members/${outsider.id}`)).toBe(404);
    expect(await status(admin, 'POST', `/v1/projects/${p.id}/members`, { user_id: outsider.id, role: 'owner' })).toBe(403);
    expect(await status(admin, 'POST', `/v1/projects/${p.id}/members`, { user_id: owner.id, role: 'viewer' })).toBe(403);
    expect(await status(admin, 'DELETE', `/v1/projects/${p.id}/members/${owner.id}`)).toBe(403);
    expect(await status(admin, 'DELETE', `/v1/projects/${p.id}`)).toBe(403);
    expect(await status(admin, 'POST', `/v1/projects/${p.id}/members`, { user_id: '00000000-0000-4000-8000-000000000000', role: 'viewer' })).toBe(404);
    expect(await status(admin, 'POST', `/v1/projects/${p.id}/members`, { user_id: outsider.id, role: 'superuser' })).toBe(400);
  });

  it('a project always keeps an owner; anyone may leave', async () => {
    const lastOwner = await h.api('DELETE', `/v1/projects/${p.id}/members/${owner.id}`, { token: owner.token });
    expect(lastOwner.status).toBe(409);
    expect(lastOwner.body.error.code).toBe('CONFLICT');
    expect(await status(owner, 'POST', `/v1/projects/${p.id}/members`, { user_id: owner.id, role: 'admin' })).toBe(409);
    await addMember(owner.token, p.id, admin.id, 'owner', 200);
    expect(await status(owner, 'DELETE', `/v1/projects/${p.id}/members/${owner.id}`)).toBe(204);
    expect(await status(owner, 'GET', `/v1/projects/${p.id}`)).toBe(404);
    expect(await status(viewer, 'DELETE', `/v1/projects/${p.id}/members/${viewer.id}`)).toBe(204);
    expect(await status(viewer, 'GET', `/v1/projects/${p.id}`)).toBe(404);
    const types = (await h.sql`select type from audit_events where project_id = ${p.id} and type like 'member.%'`).map((r) => r.type);
    expect(new Set(types)).toEqual(new Set(['member.added', 'member.updated', 'member.removed']));
  });

  it('owners and account admins delete projects', async () => {
    expect(await status(admin, 'DELETE', `/v1/projects/${p.id}`)).toBe(204);
    const other = await project(owner.token, 'for the account admin');
    expect((await h.api('GET', `/v1/projects/${other.id}`, { token: h.adminToken })).status).toBe(200);
    expect((await h.api('DELETE', `/v1/projects/${other.id}`, { token: h.adminToken })).status).toBe(204);
  });
});

describe('tenant isolation', () => {
  it('a member of project B gets 404 for everything of project A', async () => {
    const alice = await h.createUser();
    const bob = await h.createUser();
    const a = await project(alice.token, 'A');
    const b = await project(bob.token, 'B');
    const keyA = (await h.api('POST', `/v1/projects/${a.id}/keys`, { token: alice.token, body: { name: 'a key' } })).body;
    const none = '00000000-0000-4000-8000-000000000000';

    const attempts: [string, string, unknown?][] = [
      ['GET', `/v1/projects/${a.id}`],
      ['PATCH', `/v1/projects/${a.id}`, { name: 'mine now' }],
      ['DELETE', `/v1/projects/${a.id}`],
      ['GET', `/v1/projects/${a.id}/keys`],
      ['POST', `/v1/projects/${a.id}/keys`, { name: 'sneaky' }],
      ['DELETE', `/v1/projects/${a.id}/keys/${keyA.id}`],
      ['DELETE', `/v1/projects/${b.id}/keys/${keyA.id}`],
      ['GET', `/v1/projects/${a.id}/members`],
      ['POST', `/v1/projects/${a.id}/members`, { user_id: bob.id, role: 'owner' }],
      ['DELETE', `/v1/projects/${a.id}/members/${alice.id}`],
      ['GET', `/v1/usage?project_id=${a.id}`],
      ['GET', `/v1/audit?project_id=${a.id}`],
      ['GET', `/v1/projects/${none}`],
    ];
    const answers = [];
    for (const [method, path, body] of attempts) {
      const res = await h.api(method, path, { token: bob.token, body });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
      if (path.startsWith(`/v1/projects/${a.id}`) || path.startsWith(`/v1/projects/${none}`)) answers.push(res.body.error.message);
    }
    // A project that exists and one that does not are told apart by nothing.
    expect(new Set(answers)).toEqual(new Set(['No such project.']));

    // Each attempt at a change is on record, with Bob as the actor.
    const probes = await h.sql`select type, outcome, status from audit_events where actor = ${bob.id} and outcome <> 'success'`;
    expect(probes.length).toBe(attempts.filter(([method]) => method !== 'GET').length);
    expect(new Set(probes.map((r) => `${r.outcome} ${r.status}`))).toEqual(new Set(['error 404']));

    // Nothing changed: the key is live in Postgres and in Redis, the project kept its name.
    expect((await h.api('GET', `/v1/projects/${a.id}/keys`, { token: alice.token })).body.data.map((k: { id: string }) => k.id)).toEqual([keyA.id]);
    expect((await h.api('GET', `/v1/projects/${a.id}`, { token: alice.token })).body.name).toBe('A');
    expect((await h.api('GET', '/v1/projects', { token: bob.token })).body.data.map((p: { id: string }) => p.id)).toEqual([b.id]);
  });
});
