import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeProjectPolicy, RedisKeys } from '@gateway/shared';
import { startHarness, type Harness } from './harness.js';
import { eventually } from '../../test-support/processes.js';

/**
 * The response-cache setting (DESIGN §7 "Response cache") through the management API: stored,
 * validated field by field, projected into the project's policy only when on, and the purge that
 * deletes a project's entries (and only its own) from the real Redis.
 */
let h: Harness;
let keys: RedisKeys;
beforeAll(async () => {
  h = await startHarness('project-cache');
  keys = new RedisKeys(h.prefix);
});
afterAll(async () => h?.close());

async function newProject(name: string): Promise<string> {
  const created = await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name } });
  expect(created.status).toBe(201);
  return created.body.id as string;
}

async function projected(id: string) {
  const raw = await h.redis.get(keys.projectPolicy(id));
  return decodeProjectPolicy(raw as string);
}

describe('the cache setting', () => {
  it('is off by default, set with PATCH, projected only when on, and reset with null', async () => {
    const id = await newProject('cache-setting');
    expect((await h.api('GET', `/v1/projects/${id}`, { token: h.adminToken })).body.cache).toEqual({ mode: 'off', ttl_seconds: 3600 });
    expect((await projected(id)).cache).toBeUndefined();

    const on = await h.api('PATCH', `/v1/projects/${id}`, { token: h.adminToken, body: { cache: { mode: 'exact', ttl_seconds: 60 } } });
    expect(on.status).toBe(200);
    expect(on.body.cache).toEqual({ mode: 'exact', ttl_seconds: 60 });
    expect((await projected(id)).cache).toEqual({ mode: 'exact', ttl_seconds: 60 });

    // ttl_seconds left out is the default: the setting is replaced as a whole.
    const defaulted = await h.api('PATCH', `/v1/projects/${id}`, { token: h.adminToken, body: { cache: { mode: 'exact' } } });
    expect(defaulted.body.cache).toEqual({ mode: 'exact', ttl_seconds: 3600 });

    const off = await h.api('PATCH', `/v1/projects/${id}`, { token: h.adminToken, body: { cache: { mode: 'off', ttl_seconds: 60 } } });
    expect(off.body.cache).toEqual({ mode: 'off', ttl_seconds: 60 });
    expect((await projected(id)).cache).toBeUndefined();

    await h.api('PATCH', `/v1/projects/${id}`, { token: h.adminToken, body: { cache: { mode: 'exact' } } });
    const reset = await h.api('PATCH', `/v1/projects/${id}`, { token: h.adminToken, body: { cache: null } });
    expect(reset.body.cache).toEqual({ mode: 'off', ttl_seconds: 3600 });
    expect((await projected(id)).cache).toBeUndefined();
  });

  it('refuses a bad value with a 400 naming the field, and changes nothing', async () => {
    const id = await newProject('cache-invalid');
    const cases: [unknown, string][] = [
      [{ mode: 'semantic' }, 'cache.mode'],
      [{ mode: 'exact', ttl_seconds: 0 }, 'cache.ttl_seconds'],
      [{ mode: 'exact', ttl_seconds: 2_592_001 }, 'cache.ttl_seconds'],
      [{ mode: 'exact', ttl_seconds: '60' }, 'cache.ttl_seconds'],
      [{ ttl_seconds: 60 }, 'cache.mode'],
      [{ mode: 'exact', size: 1 }, 'cache.size'],
      ['exact', 'cache'],
    ];
    for (const [cache, param] of cases) {
      const res = await h.api('PATCH', `/v1/projects/${id}`, { token: h.adminToken, body: { cache } });
      expect(res.status, JSON.stringify(cache)).toBe(400);
      expect(res.body.error.code).toBe('INVALID_REQUEST');
      expect(res.body.error.param, JSON.stringify(cache)).toBe(param);
    }
    expect((await h.api('GET', `/v1/projects/${id}`, { token: h.adminToken })).body.cache).toEqual({ mode: 'off', ttl_seconds: 3600 });
  });
});

describe('DELETE /v1/projects/{id}/cache', () => {
  it("deletes the project's entries and its index, and leaves other projects' alone", async () => {
    const id = await newProject('cache-purge');
    const other = await newProject('cache-other');
    const expires = Date.now() + 60_000;
    const names = Array.from({ length: 1203 }, (_, i) => keys.cacheEntry(id, 'chat.completions', `h${i}`));
    for (let i = 0; i < names.length; i += 200) {
      const batch = names.slice(i, i + 200);
      const multi = h.redis.multi();
      for (const name of batch) multi.set(name, 'x', 'PX', 60_000).zadd(keys.cacheIndex(id), expires, name);
      await multi.exec();
    }
    const kept = keys.cacheEntry(other, 'embeddings', 'h0');
    await h.redis.multi().set(kept, 'y', 'PX', 60_000).zadd(keys.cacheIndex(other), expires, kept).exec();

    const purged = await h.api('DELETE', `/v1/projects/${id}/cache`, { token: h.adminToken });
    expect(purged.status).toBe(200);
    expect(purged.body).toEqual({ purged: 1203 });
    expect(await h.redis.exists(...names.slice(0, 50), ...names.slice(-50))).toBe(0);
    expect(await h.redis.exists(keys.cacheIndex(id))).toBe(0);
    expect(await h.redis.get(kept)).toBe('y');

    const audit = await h.api('GET', `/v1/audit?project_id=${id}&type=project.cache_purged`, { token: h.adminToken });
    expect(audit.body.data).toHaveLength(1);
  });

  it("goes with the project: deleting a project purges its entries", async () => {
    const id = await newProject('cache-deleted');
    const name = keys.cacheEntry(id, 'chat.completions', 'h0');
    await h.redis.multi().set(name, 'x', 'PX', 60_000).zadd(keys.cacheIndex(id), Date.now() + 60_000, name).exec();
    expect((await h.api('DELETE', `/v1/projects/${id}`, { token: h.adminToken })).status).toBe(204);
    await eventually(async () => (await h.redis.exists(name, keys.cacheIndex(id))) === 0, "the deleted project's entries purged");
  });

  it('is refused to a project member who may not change the project', async () => {
    const id = await newProject('cache-member');
    const member = await h.createUser('member');
    const added = await h.api('POST', `/v1/projects/${id}/members`, { token: h.adminToken, body: { user_id: member.id, role: 'member' } });
    expect(added.status).toBe(201);
    const refused = await h.api('DELETE', `/v1/projects/${id}/cache`, { token: member.token });
    expect(refused.status).toBe(403);
  });
});
