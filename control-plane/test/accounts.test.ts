import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './harness.js';

/** Accounts as an admin runs them: listing, re-roling, disabling, adding members by email. */
let h: Harness;
beforeAll(async () => {
  h = await startHarness('accounts');
});
afterAll(async () => h?.close());

const refresh = (token: string) => h.api('POST', '/v1/signins', { token, body: { grant_type: 'refresh' } });
const me = (token: string) => h.api('GET', '/v1/users/me', { token });
const patch = (token: string, id: string, body: unknown) => h.api('PATCH', `/v1/users/${id}`, { token, body });

async function auditTypes(actor: string): Promise<string[]> {
  const rows = await h.sql<{ type: string }[]>`select type from audit_events where actor = ${actor} and outcome = 'success' order by ts, id`;
  return rows.map((r) => r.type);
}

describe('GET /v1/users/me', () => {
  it('shows the signed-in account with its disabled flag and nothing secret', async () => {
    const user = await h.createUser();
    const res = await me(user.token);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: user.id, email: user.email, role: 'member', disabled: false, created_at: expect.any(String) });
  });
});

describe('GET /v1/users', () => {
  it('is for account admins only', async () => {
    const member = await h.createUser();
    const res = await h.api('GET', '/v1/users', { token: member.token });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
  });

  it('pages through every account oldest first, with no repeats and no gaps', async () => {
    for (let i = 0; i < 4; i++) await h.createUser();
    const all = (await h.sql<{ id: string }[]>`select id from users order by created_at, id`).map((r) => r.id);
    expect(all.length).toBeGreaterThanOrEqual(5);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor === null ? '?limit=2' : `?limit=2&cursor=${encodeURIComponent(cursor)}`;
      const res = await h.api('GET', `/v1/users${query}`, { token: h.adminToken });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(2);
      for (const user of res.body.data) expect(Object.keys(user).sort()).toEqual(['created_at', 'disabled', 'email', 'id', 'role']);
      seen.push(...res.body.data.map((u: { id: string }) => u.id));
      expect(res.body.has_more).toBe(res.body.next_cursor !== null);
      cursor = res.body.next_cursor;
      pages++;
    } while (cursor !== null && pages < 20);
    expect(seen).toEqual(all);
    expect(JSON.stringify(await h.api('GET', '/v1/users?limit=1000', { token: h.adminToken }))).not.toContain('scrypt');
  });

  it('filters by a case-insensitive substring of the email, wildcard characters taken literally', async () => {
    for (const email of ['Ana.Filter@Example.test', 'bob.filter@example.test', 'carol@elsewhere.test', 'percent_100%@example.test']) {
      expect((await h.api('POST', '/v1/users', { token: h.adminToken, body: { email, password: 'a long password' } })).status).toBe(201);
    }
    const emails = async (filter: string) =>
      (await h.api('GET', `/v1/users?email=${encodeURIComponent(filter)}`, { token: h.adminToken })).body.data.map((u: { email: string }) => u.email);
    expect(await emails('FILTER@')).toEqual(['Ana.Filter@Example.test', 'bob.filter@example.test']);
    expect(await emails('carol@elsewhere.test')).toEqual(['carol@elsewhere.test']);
    expect(await emails('_100%')).toEqual(['percent_100%@example.test']);
    expect(await emails('%')).toEqual(['percent_100%@example.test']);
    expect(await emails('nobody-has-this')).toEqual([]);
  });

  it('refuses a cursor of another list and bad parameters', async () => {
    const usage = await h.api('GET', '/v1/audit?limit=1', { token: h.adminToken });
    expect(usage.body.next_cursor).toEqual(expect.any(String));
    const foreign = await h.api('GET', `/v1/users?cursor=${encodeURIComponent(usage.body.next_cursor)}`, { token: h.adminToken });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error).toMatchObject({ code: 'INVALID_REQUEST', param: 'cursor' });
    expect((await h.api('GET', '/v1/users?limit=0', { token: h.adminToken })).status).toBe(400);
    expect((await h.api('GET', '/v1/users?role=admin', { token: h.adminToken })).status).toBe(400);
  });
});

describe('POST /v1/users', () => {
  it('applies the password policy', async () => {
    const short = await h.api('POST', '/v1/users', { token: h.adminToken, body: { email: 'short@example.test', password: 'elevenchars' } });
    expect(short.status).toBe(400);
    expect(short.body.error).toMatchObject({ code: 'INVALID_REQUEST', param: 'password' });
    const own = await h.api('POST', '/v1/users', { token: h.adminToken, body: { email: 'Own.Email@Example.test', password: 'own.email@example.TEST' } });
    expect(own.status).toBe(400);
    expect(own.body.error).toMatchObject({ param: 'password', message: "body.password must not be the account's email" });
    expect((await h.sql`select 1 from users where lower(email) in ('short@example.test', 'own.email@example.test')`).length).toBe(0);
  });
});

describe('PATCH /v1/users/{id}', () => {
  it('changes the account role, which applies to the next request', async () => {
    const user = await h.createUser();
    expect((await h.api('GET', '/v1/users', { token: user.token })).status).toBe(403);
    const res = await patch(h.adminToken, user.id, { role: 'admin' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: user.id, role: 'admin', disabled: false });
    expect((await h.api('GET', '/v1/users', { token: user.token })).status).toBe(200);
    expect(await auditTypes(h.adminId)).toContain('user.updated');
  });

  it('disabling refuses every token of the account at once, refresh included, and its sign-ins', async () => {
    const user = await h.createUser();
    const second = await h.signin(user.email, user.password);
    const res = await patch(h.adminToken, user.id, { disabled: true });
    expect(res.status).toBe(200);
    expect(res.body.disabled).toBe(true);
    for (const token of [user.token, second]) {
      const refused = await me(token);
      expect(refused.status).toBe(401);
      expect(refused.body.error).toMatchObject({ code: 'UNAUTHORIZED', message: expect.stringMatching(/disabled/) });
      expect((await refresh(token)).status).toBe(401);
    }
    const signin = await h.api('POST', '/v1/signins', { body: { grant_type: 'password', email: user.email, password: user.password } });
    expect(signin.status).toBe(401);
    expect(signin.body.error.message).toMatch(/disabled/);

    // Enabled again: the account signs in, but the sessions the disable ended stay ended.
    expect((await patch(h.adminToken, user.id, { disabled: false })).body.disabled).toBe(false);
    expect((await me(user.token)).status).toBe(401);
    expect((await me(await h.signin(user.email, user.password))).status).toBe(200);

    const types = await h.sql<{ type: string }[]>`select type from audit_events where actor = ${h.adminId} and type in ('user.disabled', 'user.enabled') order by ts, id`;
    expect(types.map((r) => r.type).slice(-2)).toEqual(['user.disabled', 'user.enabled']);
    const [failed] = await h.sql`select outcome, status from audit_events where type = 'signin.failed' and actor = ${user.id}`;
    expect(failed).toEqual({ outcome: 'auth_failed', status: 401 });
  });

  it('keeps one enabled account admin: the last one cannot disable or demote itself', async () => {
    // Other admins made by earlier tests are disabled first, so the seeded admin is the last one.
    await h.sql`update users set disabled = true where role = 'admin' and id <> ${h.adminId}`;
    for (const body of [{ disabled: true }, { role: 'member' }, { role: 'member', disabled: true }]) {
      const res = await patch(h.adminToken, h.adminId, body);
      expect(res.status, JSON.stringify(body)).toBe(409);
      expect(res.body.error).toMatchObject({ code: 'CONFLICT', message: expect.stringMatching(/last enabled account admin/) });
    }
    const [row] = await h.sql`select role, disabled from users where id = ${h.adminId}`;
    expect(row).toEqual({ role: 'admin', disabled: false });
    const [refusal] = await h.sql`select outcome, status, error_code from audit_events where type = 'user.updated' and status = 409`;
    expect(refusal).toEqual({ outcome: 'error', status: 409, error_code: 'CONFLICT' });

    // With a second enabled admin, the first may step down.
    const other = await h.createUser('admin');
    const demoted = await patch(h.adminToken, h.adminId, { role: 'member' });
    expect(demoted.status).toBe(200);
    expect((await patch(other.token, h.adminId, { role: 'admin' })).status).toBe(200);
    expect((await me(h.adminToken)).body.role).toBe('admin');
  });

  it('lets two last admins racing to step down leave one of them an admin', async () => {
    await h.sql`update users set disabled = true where role = 'admin' and id <> ${h.adminId}`;
    const other = await h.createUser('admin');
    const [a, b] = await Promise.all([patch(h.adminToken, h.adminId, { role: 'member' }), patch(other.token, other.id, { role: 'member' })]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const [{ n }] = (await h.sql`select count(*)::int as n from users where role = 'admin' and not disabled`) as unknown as [{ n: number }];
    expect(n).toBe(1);
    // Put the seeded admin back for the tests that follow.
    if (a.status === 200) expect((await patch(other.token, h.adminId, { role: 'admin' })).status).toBe(200);
  });

  it('is for account admins, on accounts that exist, with known fields', async () => {
    const member = await h.createUser();
    const forbidden = await patch(member.token, member.id, { role: 'admin' });
    expect(forbidden.status).toBe(403);
    const [blocked] = await h.sql`select outcome, project_id from audit_events where type = 'user.updated' and actor = ${member.id}`;
    // The user id in the path is not mistaken for a project.
    expect(blocked).toEqual({ outcome: 'policy_blocked', project_id: null });
    expect((await patch(h.adminToken, '00000000-0000-4000-8000-000000000000', { disabled: true })).status).toBe(404);
    expect((await patch(h.adminToken, 'not-a-uuid', { disabled: true })).status).toBe(400);
    expect((await patch(h.adminToken, member.id, {})).status).toBe(400);
    expect((await patch(h.adminToken, member.id, { email: 'x@example.test' })).status).toBe(400);
    expect((await patch(h.adminToken, member.id, { disabled: 'yes' })).status).toBe(400);
  });
});

describe('POST /v1/projects/{id}/members by email', () => {
  it('adds the account with that email, in any case', async () => {
    const owner = await h.createUser();
    const friend = await h.createUser();
    const project = (await h.api('POST', '/v1/projects', { token: owner.token, body: { name: 'by email' } })).body;
    const res = await h.api('POST', `/v1/projects/${project.id}/members`, { token: owner.token, body: { email: friend.email.toUpperCase(), role: 'viewer' } });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ project_id: project.id, user_id: friend.id, email: friend.email, role: 'viewer' });
    const again = await h.api('POST', `/v1/projects/${project.id}/members`, { token: owner.token, body: { email: friend.email, role: 'member' } });
    expect(again.status).toBe(200);
    expect(again.body.role).toBe('member');
  });

  it('wants exactly one of user_id and email, and says when no account has the email', async () => {
    const owner = await h.createUser();
    const friend = await h.createUser();
    const project = (await h.api('POST', '/v1/projects', { token: owner.token, body: { name: 'by email 2' } })).body;
    const add = (body: unknown) => h.api('POST', `/v1/projects/${project.id}/members`, { token: owner.token, body });
    const both = await add({ user_id: friend.id, email: friend.email, role: 'viewer' });
    expect(both.status).toBe(400);
    expect(both.body.error.message).toMatch(/exactly one of user_id and email/);
    expect((await add({ role: 'viewer' })).status).toBe(400);
    const unknown = await add({ email: 'nobody-here@example.test', role: 'viewer' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 'NOT_FOUND', param: 'email', message: expect.stringMatching(/No account has this email/) });
    expect((await add({ email: 'not an email', role: 'viewer' })).status).toBe(400);
    // A stranger to the project learns nothing about which emails exist.
    const stranger = await h.createUser();
    const probe = await h.api('POST', `/v1/projects/${project.id}/members`, { token: stranger.token, body: { email: friend.email, role: 'viewer' } });
    expect(probe.status).toBe(404);
    expect(probe.body.error.message).not.toMatch(/email/);
  });
});
