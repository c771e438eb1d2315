import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeGuardrailSet, decodeInvalidation, encodeGuardrailSet, encodeKeyRecord, RedisKeys, type Invalidation } from '@gateway/shared';
import { TEST_REDIS_URL } from '../../test-support/databases.js';
import { ProjectionRebuilder } from '../src/keys/projection-rebuild.js';
import { startHarness, type Harness } from './harness.js';

/**
 * The projection rebuild: one control plane at a time, and proxies told only what changed — a
 * rebuild over a correct projection announces nothing, one that finds a dead key still projected
 * announces that key, one that finds a policy changed announces that project.
 */
let h: Harness;
let keys: RedisKeys;
let subscriber: Redis;
const messages: Invalidation[] = [];
const quiet = pino({ level: 'silent' });

beforeAll(async () => {
  h = await startHarness('rebuild');
  keys = new RedisKeys(h.prefix);
  subscriber = new Redis(TEST_REDIS_URL);
  subscriber.on('message', (_channel: string, raw: string) => messages.push(decodeInvalidation(raw)));
  await subscriber.subscribe(keys.invalidationChannel);
});

afterAll(async () => {
  subscriber?.disconnect();
  await h?.close();
});

/** Runs a rebuild and returns what it published (a PING round trip on the subscriber flushes delivery). */
async function rebuild(): Promise<{ result: Awaited<ReturnType<ProjectionRebuilder['run']>>; published: Invalidation[] }> {
  messages.length = 0;
  const result = await new ProjectionRebuilder(h.cp.ctx.redis, keys, quiet).run(h.cp.ctx.sql);
  const marker = `rebuild-done-${Date.now()}`;
  await h.redis.publish(keys.invalidationChannel, JSON.stringify({ v: 1, kind: 'key.created', key_hash: marker, key_id: null, project_id: null, at: 0 }));
  for (let i = 0; i < 200 && !messages.some((m) => m.key_hash === marker); i++) await new Promise((r) => setTimeout(r, 10));
  return { result, published: messages.filter((m) => m.key_hash !== marker) };
}

describe('projection rebuild', () => {
  it('announces nothing when the projection was right, and sets the ready marker', async () => {
    const project = await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: 'steady' } });
    expect((await h.api('POST', `/v1/projects/${project.body.id}/keys`, { token: h.adminToken, body: { name: 'k' } })).status).toBe(201);
    await h.redis.del(keys.projectionReady);
    const { result, published } = await rebuild();
    expect(result).toMatchObject({ removed: 0, policiesChanged: 0 });
    expect(published).toEqual([]);
    expect(await h.redis.exists(keys.projectionReady)).toBe(1);
  });

  it('announces only a dead key it found projected, and only a policy that changed', async () => {
    const project = await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: 'changing' } });
    const created = await h.api('POST', `/v1/projects/${project.body.id}/keys`, { token: h.adminToken, body: { name: 'k' } });
    const [row] = await h.sql<{ key_hash: string }[]>`select key_hash from api_keys where id = ${created.body.id}`;
    // Deleted in Postgres while its Redis step never happened (Redis was away).
    await h.sql`update api_keys set deleted_at = now() - interval '1 hour' where id = ${created.body.id}`;
    await h.redis.set(keys.apiKey(row!.key_hash), encodeKeyRecord({ id: created.body.id, project_id: project.body.id, expires_at: null }));
    // A policy changed in Postgres that Redis does not have yet.
    await h.sql`update projects set quota_tokens = 12345 where id = ${project.body.id}`;

    const { result, published } = await rebuild();
    expect(result).toMatchObject({ removed: 1, policiesChanged: 1 });
    expect(published).toHaveLength(2);
    expect(published).toContainEqual(expect.objectContaining({ kind: 'key.deleted', key_hash: row!.key_hash, key_id: created.body.id, project_id: project.body.id }));
    expect(published).toContainEqual(expect.objectContaining({ kind: 'project.updated', project_id: project.body.id }));
    expect(published.some((m) => m.kind === 'projection.rebuilt')).toBe(false);
    expect(await h.redis.exists(keys.apiKey(row!.key_hash))).toBe(0);
  });

  it('announces nothing for what an empty Redis lost', async () => {
    const hashes = (await h.sql<{ key_hash: string }[]>`select key_hash from api_keys where deleted_at is null`).map((r) => r.key_hash);
    expect(hashes.length).toBeGreaterThan(0);
    for (const hash of hashes) await h.redis.del(keys.apiKey(hash));
    const names = await h.redis.keys(`${h.prefix}project:*`);
    if (names.length > 0) await h.redis.del(...names);
    await h.redis.del(keys.projectionReady);
    const { published } = await rebuild();
    expect(published).toEqual([]);
    for (const hash of hashes) expect(await h.redis.exists(keys.apiKey(hash))).toBe(1);
  });

  it('projects guardrails beside the policy: rewrites one that differs, removes one Postgres no longer has', async () => {
    const project = await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: 'guarded' } });
    const id: string = project.body.id;
    const list = [{ id: 'no-secrets', stage: 'both', type: 'pii', action: 'block', entities: ['secret'] }];
    expect((await h.api('PUT', `/v1/projects/${id}/guardrails`, { token: h.adminToken, body: list })).status).toBe(200);
    expect(decodeGuardrailSet((await h.redis.get(keys.projectGuardrails(id)))!).guardrails).toEqual(list);
    expect((await rebuild()).published).toEqual([]);

    // Redis holds another list (a change whose Redis step never happened): rewritten and announced.
    await h.redis.set(keys.projectGuardrails(id), encodeGuardrailSet(id, []));
    expect((await rebuild()).published.map((m) => [m.kind, m.project_id])).toEqual([['project.updated', id]]);
    expect(decodeGuardrailSet((await h.redis.get(keys.projectGuardrails(id)))!).guardrails).toEqual(list);

    // Removed in Postgres only: the projected list goes too.
    await h.sql`delete from project_guardrails where project_id = ${id}`;
    expect((await rebuild()).published.map((m) => [m.kind, m.project_id])).toEqual([['project.updated', id]]);
    expect(await h.redis.exists(keys.projectGuardrails(id))).toBe(0);
  });

  it('lets one control plane rebuild at a time: another waits, and skips when that rebuild completed', async () => {
    await h.redis.set(keys.projectionRebuildLock, 'another-control-plane', 'PX', 60_000);
    await h.redis.del(keys.projectionReady);
    let done = false;
    const waiting = new ProjectionRebuilder(h.cp.ctx.redis, keys, quiet).run(h.cp.ctx.sql).then((r) => {
      done = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 500));
    expect(done).toBe(false);
    // The other one completes: its marker is set, its lock released.
    await h.redis.set(keys.projectionReady, '1');
    await h.redis.del(keys.projectionRebuildLock);
    expect(await waiting).toBeNull();

    // A holder that died (lock gone, no marker): the waiting one rebuilds itself.
    await h.redis.set(keys.projectionRebuildLock, 'crashed-control-plane', 'PX', 300);
    await h.redis.del(keys.projectionReady);
    const result = await new ProjectionRebuilder(h.cp.ctx.redis, keys, quiet).run(h.cp.ctx.sql);
    expect(result).not.toBeNull();
    expect(await h.redis.exists(keys.projectionReady)).toBe(1);
    expect(await h.redis.exists(keys.projectionRebuildLock)).toBe(0);
  });
});
