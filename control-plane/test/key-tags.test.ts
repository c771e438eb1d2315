import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeKeyRecord, hashApiKey, RedisKeys } from '@gateway/shared';
import { ProjectionRebuilder } from '../src/keys/projection-rebuild.js';
import { startHarness, type Harness } from './harness.js';

/**
 * A key's default tags: checked by the rules of x-gateway-tags, stored, listed, and projected
 * into the key record the proxies read (by the creation and by a rebuild).
 */
let h: Harness;
let keys: RedisKeys;
let projectId: string;

beforeAll(async () => {
  h = await startHarness('key-tags');
  keys = new RedisKeys(h.prefix);
  projectId = (await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: 'tagged' } })).body.id;
});
afterAll(async () => {
  await h?.close();
});

describe('key default tags', () => {
  it('are stored, shown, listed and projected', async () => {
    const created = await h.api('POST', `/v1/projects/${projectId}/keys`, { token: h.adminToken, body: { name: 'search', tags: { team: 'search', env: 'prod' } } });
    expect(created.status).toBe(201);
    expect(created.body.tags).toEqual({ team: 'search', env: 'prod' });
    const listed = await h.api('GET', `/v1/projects/${projectId}/keys`, { token: h.adminToken });
    expect(listed.body.data.find((k: { id: string }) => k.id === created.body.id).tags).toEqual({ team: 'search', env: 'prod' });
    const record = decodeKeyRecord((await h.redis.get(keys.apiKey(hashApiKey(created.body.key)))) as string);
    expect(record.tags).toEqual({ team: 'search', env: 'prod' });

    // A rebuild writes the same record again from PostgreSQL.
    await h.redis.del(keys.apiKey(hashApiKey(created.body.key)));
    await new ProjectionRebuilder(h.cp.ctx.redis, keys, pino({ level: 'silent' })).run(h.cp.ctx.sql);
    expect(decodeKeyRecord((await h.redis.get(keys.apiKey(hashApiKey(created.body.key)))) as string).tags).toEqual({ team: 'search', env: 'prod' });
  });

  it('default to none', async () => {
    const created = await h.api('POST', `/v1/projects/${projectId}/keys`, { token: h.adminToken, body: { name: 'plain' } });
    expect(created.body.tags).toEqual({});
    expect(decodeKeyRecord((await h.redis.get(keys.apiKey(hashApiKey(created.body.key)))) as string)).not.toHaveProperty('tags');
  });

  it('are refused with a 400 naming the tag when they break the rules', async () => {
    for (const [tags, named] of [
      [{ Team: 'x' }, '`Team`'],
      [{ team: 'a b' }, 'tag `team`'],
      [{ team: '' }, 'tag `team`'],
      [Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, 'v'])), 'at most 10'],
    ] as const) {
      const refused = await h.api('POST', `/v1/projects/${projectId}/keys`, { token: h.adminToken, body: { name: 'bad', tags } });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'INVALID_REQUEST', param: 'tags' });
      expect(refused.body.error.message).toContain(named);
    }
    const notStrings = await h.api('POST', `/v1/projects/${projectId}/keys`, { token: h.adminToken, body: { name: 'bad', tags: { team: 3 } } });
    expect(notStrings.status).toBe(400);
    const [{ count }] = (await h.sql<{ count: string }[]>`select count(*)::text as count from api_keys where name = 'bad'`) as unknown as [{ count: string }];
    expect(count).toBe('0');
  });
});
