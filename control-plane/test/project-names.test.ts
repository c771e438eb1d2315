import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './harness.js';

/**
 * Project names are unique per account (among the projects it owns), whatever their case: a second
 * "Search" is a 409 that names the first, on creation and on a rename; another account, or a
 * deleted project, does not count.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness('projnames');
});
afterAll(async () => h?.close());

const create = (token: string, name: string) => h.api('POST', '/v1/projects', { token, body: { name } });

describe('project names', () => {
  it('are unique among the projects an account owns, whatever their case', async () => {
    const first = await create(h.adminToken, 'Search');
    expect(first.status).toBe(201);
    for (const name of ['Search', 'search', 'SEARCH', '  search  ']) {
      const again = await create(h.adminToken, name);
      expect(again.status, name).toBe(409);
      expect(again.body.error).toMatchObject({ code: 'CONFLICT', param: 'name' });
      expect(again.body.error.message).toContain(`"Search" (${first.body.id})`);
    }
    // Unicode case too, as PostgreSQL folds it.
    expect((await create(h.adminToken, 'Über')).status).toBe(201);
    expect((await create(h.adminToken, 'über')).status).toBe(409);
    const audit = await h.sql`select outcome, status, error_code from audit_events where type = 'project.created' and status = 409 limit 1`;
    expect(audit[0]).toEqual({ outcome: 'error', status: 409, error_code: 'CONFLICT' });
  });

  it('of another account do not count, nor a deleted project', async () => {
    const member = await h.createUser();
    expect((await create(member.token, 'Search')).status).toBe(201);
    const gone = await create(member.token, 'Archive');
    expect((await h.api('DELETE', `/v1/projects/${gone.body.id}`, { token: member.token })).status).toBe(204);
    expect((await create(member.token, 'archive')).status).toBe(201);
  });

  it('are checked on a rename, for every owner of the project, the project itself aside', async () => {
    const owner = await h.createUser();
    const a = await create(owner.token, 'Alpha');
    const b = await create(owner.token, 'Beta');
    const renamed = await h.api('PATCH', `/v1/projects/${b.body.id}`, { token: owner.token, body: { name: 'ALPHA' } });
    expect(renamed.status).toBe(409);
    expect(renamed.body.error.message).toContain(`"Alpha" (${a.body.id})`);
    // Its own name in another case is fine.
    expect((await h.api('PATCH', `/v1/projects/${a.body.id}`, { token: owner.token, body: { name: 'ALPHA' } })).status).toBe(200);
    // A second owner's projects count too: an account admin renaming the project cannot give it the name of one of its owner's.
    const c = await create(h.adminToken, 'Gamma');
    expect((await h.api('POST', `/v1/projects/${c.body.id}/members`, { token: h.adminToken, body: { user_id: owner.id, role: 'owner' } })).status).toBe(201);
    expect((await h.api('PATCH', `/v1/projects/${c.body.id}`, { token: h.adminToken, body: { name: 'beta' } })).status).toBe(409);
  });

  it('hold when an account is made owner of a project named like one it owns', async () => {
    const owner = await h.createUser();
    const mine = await create(owner.token, 'Delta');
    const theirs = await create(h.adminToken, 'DELTA');
    const made = await h.api('POST', `/v1/projects/${theirs.body.id}/members`, { token: h.adminToken, body: { user_id: owner.id, role: 'owner' } });
    expect(made.status).toBe(409);
    expect(made.body.error.message).toContain(`"Delta" (${mine.body.id}) already exists for the new owner`);
    // Any other role is fine: names are unique among the projects an account owns.
    expect((await h.api('POST', `/v1/projects/${theirs.body.id}/members`, { token: h.adminToken, body: { user_id: owner.id, role: 'admin' } })).status).toBe(201);
  });

  it('hold when two creations race for one name', async () => {
    const user = await h.createUser();
    const statuses = (await Promise.all([0, 1, 2, 3].map(() => create(user.token, 'Race')))).map((r) => r.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409]);
  });
});
