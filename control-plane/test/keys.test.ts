import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeInvalidation, decodeKeyRecord, hashApiKey, RedisKeys, type Invalidation } from '@gateway/shared';
import { TEST_REDIS_URL } from '../../test-support/databases.js';
import { startHarness, type Harness } from './harness.js';

let h: Harness;
let keys: RedisKeys;
let subscriber: Redis;
const messages: Invalidation[] = [];
const waiters: { match: (m: Invalidation) => boolean; resolve: (m: Invalidation) => void }[] = [];

/** Resolves with the first invalidation (already received or still to come) that matches. */
function invalidation(match: (m: Invalidation) => boolean): Promise<Invalidation> {
  const seen = messages.find(match);
  if (seen) return Promise.resolve(seen);
  return new Promise((resolve) => waiters.push({ match, resolve }));
}

beforeAll(async () => {
  h = await startHarness('keys', { captureLogs: true });
  keys = new RedisKeys(h.prefix);
  subscriber = new Redis(TEST_REDIS_URL);
  subscriber.on('message', (_channel: string, raw: string) => {
    const msg = decodeInvalidation(raw);
    messages.push(msg);
    for (const w of waiters.filter((w) => w.match(msg))) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(msg);
    }
  });
  await subscriber.subscribe(keys.invalidationChannel);
});
afterAll(async () => {
  subscriber?.disconnect();
  await h?.close();
});

/** Names are unique per account: each project of this file gets its own. */
let projects = 0;
async function newProject(name = 'keys') {
  return (await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: `${name} ${++projects}` } })).body as { id: string };
}

describe('API keys', () => {
  it('are shown once, stored as a hash, projected into Redis and announced', async () => {
    const p = await newProject();
    const created = await h.api('POST', `/v1/projects/${p.id}/keys`, { token: h.adminToken, body: { name: 'ci' } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      project_id: p.id,
      name: 'ci',
      prefix: expect.stringMatching(/^gw_/),
      key: expect.stringMatching(/^gw_[A-Za-z0-9_-]{43}$/),
      created_at: expect.any(String),
      expires_at: null,
      tags: {},
    });
    const { key, id, prefix } = created.body as { key: string; id: string; prefix: string };
    expect(key.startsWith(prefix)).toBe(true);

    const [row] = await h.sql`select key_hash, prefix from api_keys where id = ${id}`;
    expect(row).toEqual({ key_hash: hashApiKey(key), prefix });
    const projected = await h.redis.get(keys.apiKey(hashApiKey(key)));
    expect(decodeKeyRecord(projected as string)).toEqual({ v: 1, id, project_id: p.id, expires_at: null });
    expect(await h.redis.sismember(keys.projectKeys(p.id), hashApiKey(key))).toBe(1);
    expect(await invalidation((m) => m.kind === 'key.created' && m.key_id === id)).toMatchObject({ key_hash: hashApiKey(key), project_id: p.id });

    const listed = await h.api('GET', `/v1/projects/${p.id}/keys`, { token: h.adminToken });
    expect(listed.body.data).toEqual([
      { id, project_id: p.id, name: 'ci', prefix, created_by: h.adminId, created_at: created.body.created_at, expires_at: null, last_used_at: null, deleted_at: null, tags: {} },
    ]);
    expect(listed.text).not.toContain(key);
    expect(listed.text).not.toContain(hashApiKey(key));
  });

  it('are deleted from Postgres, then from Redis, with a key.deleted invalidation', async () => {
    const p = await newProject();
    const created = (await h.api('POST', `/v1/projects/${p.id}/keys`, { token: h.adminToken, body: { name: 'doomed' } })).body;
    const hash = hashApiKey(created.key);
    const deleted = await h.api('DELETE', `/v1/projects/${p.id}/keys/${created.id}`, { token: h.adminToken });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect(await invalidation((m) => m.kind === 'key.deleted' && m.key_id === created.id)).toMatchObject({ key_hash: hash, project_id: p.id });
    expect(await h.redis.exists(keys.apiKey(hash))).toBe(0);
    expect(await h.redis.sismember(keys.projectKeys(p.id), hash)).toBe(0);
    const [row] = await h.sql`select deleted_at from api_keys where id = ${created.id}`;
    expect(row?.deleted_at).not.toBeNull();
    expect((await h.api('GET', `/v1/projects/${p.id}/keys`, { token: h.adminToken })).body.data).toEqual([]);
    expect((await h.api('DELETE', `/v1/projects/${p.id}/keys/${created.id}`, { token: h.adminToken })).status).toBe(404);
    const audited = await h.sql`select type, outcome, status, actor from audit_events where key_id = ${created.id} order by ts, id`;
    expect(audited).toEqual([
      { type: 'key.created', outcome: 'success', status: 201, actor: h.adminId },
      { type: 'key.deleted', outcome: 'success', status: 204, actor: h.adminId },
      // The second attempt, refused.
      { type: 'key.deleted', outcome: 'error', status: 404, actor: h.adminId },
    ]);
  });

  it('are listed with the deleted ones only when include_deleted asks for the history', async () => {
    const p = await newProject();
    const kept = (await h.api('POST', `/v1/projects/${p.id}/keys`, { token: h.adminToken, body: { name: 'kept' } })).body;
    const gone = (await h.api('POST', `/v1/projects/${p.id}/keys`, { token: h.adminToken, body: { name: 'gone' } })).body;
    expect((await h.api('DELETE', `/v1/projects/${p.id}/keys/${gone.id}`, { token: h.adminToken })).status).toBe(204);

    const live = await h.api('GET', `/v1/projects/${p.id}/keys`, { token: h.adminToken });
    expect(live.body.data.map((k: { name: string }) => k.name)).toEqual(['kept']);
    expect((await h.api('GET', `/v1/projects/${p.id}/keys?include_deleted=false`, { token: h.adminToken })).body).toEqual(live.body);

    const all = await h.api('GET', `/v1/projects/${p.id}/keys?include_deleted=true`, { token: h.adminToken });
    expect(all.status).toBe(200);
    const [row] = await h.sql`select deleted_at from api_keys where id = ${gone.id}`;
    expect(all.body.data).toEqual([
      expect.objectContaining({ id: kept.id, name: 'kept', deleted_at: null }),
      expect.objectContaining({ id: gone.id, name: 'gone', deleted_at: (row?.deleted_at as Date).toISOString() }),
    ]);
    // Neither a secret nor a hash of a deleted key leaves either.
    expect(all.text).not.toContain(gone.key);
    expect(all.text).not.toContain(hashApiKey(gone.key));

    const bad = await h.api('GET', `/v1/projects/${p.id}/keys?include_deleted=maybe`, { token: h.adminToken });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'INVALID_REQUEST', param: 'include_deleted' });
    expect((await h.api('GET', `/v1/projects/${p.id}/keys?deleted=1`, { token: h.adminToken })).status).toBe(400);
  });

  it('carry an expiry into Redis, which must lie in the future', async () => {
    const p = await newProject();
    const expiresAt = new Date(Date.now() + 86_400_000);
    const created = await h.api('POST', `/v1/projects/${p.id}/keys`, { token: h.adminToken, body: { name: 'temp', expires_at: expiresAt.toISOString() } });
    expect(created.status).toBe(201);
    expect(created.body.expires_at).toBe(expiresAt.toISOString());
    const hash = hashApiKey(created.body.key);
    expect(decodeKeyRecord((await h.redis.get(keys.apiKey(hash))) as string).expires_at).toBe(expiresAt.getTime());
    expect(await h.redis.pexpiretime(keys.apiKey(hash))).toBe(expiresAt.getTime());

    for (const expires_at of [new Date(Date.now() - 1000).toISOString(), 'tomorrow', 12345]) {
      const res = await h.api('POST', `/v1/projects/${p.id}/keys`, { token: h.adminToken, body: { name: 'bad', expires_at } });
      expect(res.status, String(expires_at)).toBe(400);
      expect(res.body.error.param).toBe('expires_at');
    }
    expect((await h.api('POST', `/v1/projects/${p.id}/keys`, { token: h.adminToken, body: { name: '' } })).status).toBe(400);
  });

  it('all go when their project is deleted', async () => {
    const p = await newProject();
    const made = [];
    for (const name of ['one', 'two', 'three']) made.push((await h.api('POST', `/v1/projects/${p.id}/keys`, { token: h.adminToken, body: { name } })).body);
    await h.api('DELETE', `/v1/projects/${p.id}/keys/${made[2].id}`, { token: h.adminToken });
    expect((await h.api('DELETE', `/v1/projects/${p.id}`, { token: h.adminToken })).status).toBe(204);
    expect(await invalidation((m) => m.kind === 'project.deleted' && m.project_id === p.id)).toMatchObject({ key_hash: null, key_id: null });
    for (const k of made) expect(await h.redis.exists(keys.apiKey(hashApiKey(k.key)))).toBe(0);
    expect(await h.redis.exists(keys.projectKeys(p.id))).toBe(0);
    const live = await h.sql`select id from api_keys where project_id = ${p.id} and deleted_at is null`;
    expect(live).toEqual([]);
    expect((await h.api('GET', `/v1/projects/${p.id}/keys`, { token: h.adminToken })).status).toBe(404);
  });

  it('created while their project is being deleted never outlive it in Redis', async () => {
    const p = await newProject('race');
    const creations = Array.from({ length: 12 }, (_, i) => h.api('POST', `/v1/projects/${p.id}/keys`, { token: h.adminToken, body: { name: `k${i}` } }));
    const deletion = h.api('DELETE', `/v1/projects/${p.id}`, { token: h.adminToken });
    const results = await Promise.all([...creations, deletion]);
    expect(results.at(-1)?.status).toBe(204);
    for (const res of results.slice(0, -1)) expect([201, 404]).toContain(res.status);
    const stored = await h.sql`select key_hash, deleted_at from api_keys where project_id = ${p.id}`;
    for (const row of stored) {
      expect(row.deleted_at).not.toBeNull();
      expect(await h.redis.exists(keys.apiKey(row.key_hash as string))).toBe(0);
    }
  });

  it('never leave their secret in a list, an audit row or a log line', async () => {
    const p = await newProject('secrets');
    const created = await h.api('POST', `/v1/projects/${p.id}/keys`, { token: h.adminToken, body: { name: 'watched' } });
    const secret = created.body.key as string;
    expect(created.text).toContain(secret);
    // Every read a dashboard could make afterwards.
    const reads = await Promise.all([
      h.api('GET', `/v1/projects/${p.id}/keys`, { token: h.adminToken }),
      h.api('GET', `/v1/projects/${p.id}`, { token: h.adminToken }),
      h.api('GET', '/v1/projects', { token: h.adminToken }),
      h.api('GET', `/v1/audit?project_id=${p.id}`, { token: h.adminToken }),
      h.api('GET', '/v1/audit?limit=1000', { token: h.adminToken }),
      h.api('GET', '/v1/usage', { token: h.adminToken }),
    ]);
    for (const read of reads) {
      expect(read.status).toBe(200);
      expect(read.text).not.toContain(secret);
      expect(read.text).not.toContain(secret.slice(12));
    }
    await h.api('DELETE', `/v1/projects/${p.id}/keys/${created.body.id}`, { token: h.adminToken });
    const auditRows = JSON.stringify(await h.sql`select * from audit_events`);
    expect(auditRows).not.toContain(secret);
    expect(auditRows).not.toContain(hashApiKey(secret));
    const logs = h.logs.join('');
    expect(logs.length).toBeGreaterThan(0);
    expect(logs).toContain(created.body.id);
    expect(logs).not.toContain(secret);
    expect(logs).not.toContain(secret.slice(12));
  });
});

describe('GET /v1/keys', () => {
  it("lists the keys of every project the caller may read, in one request, and no one else's", async () => {
    const mine = await newProject('mine');
    const theirs = await newProject('theirs');
    const gone = await newProject('gone');
    const key = async (projectId: string, name: string) => (await h.api('POST', `/v1/projects/${projectId}/keys`, { token: h.adminToken, body: { name } })).body.id as string;
    const a = await key(mine.id, 'a');
    const deleted = await key(mine.id, 'deleted');
    const b = await key(theirs.id, 'b');
    const c = await key(gone.id, 'c');
    expect((await h.api('DELETE', `/v1/projects/${mine.id}/keys/${deleted}`, { token: h.adminToken })).status).toBe(204);
    expect((await h.api('DELETE', `/v1/projects/${gone.id}`, { token: h.adminToken })).status).toBe(204);
    const member = await h.createUser('member');
    expect((await h.api('POST', `/v1/projects/${mine.id}/members`, { token: h.adminToken, body: { user_id: member.id, role: 'viewer' } })).status).toBe(201);

    const ids = async (token: string, query = '') => {
      const res = await h.api('GET', `/v1/keys${query}`, { token });
      expect(res.status, res.text).toBe(200);
      expect(res.text).not.toMatch(/"key"|key_hash/);
      return (res.body.data as { id: string }[]).map((k) => k.id);
    };
    expect(await ids(member.token)).toEqual([a]);
    expect(await ids(member.token, '?include_deleted=true')).toEqual([a, deleted]);
    const all = await ids(h.adminToken);
    expect(all).toEqual(expect.arrayContaining([a, b]));
    expect(all).not.toContain(deleted);
    expect(all).not.toContain(c);
    const outsider = await h.createUser('member');
    expect(await ids(outsider.token)).toEqual([]);
  });
});
