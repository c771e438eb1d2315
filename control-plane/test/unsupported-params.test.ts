import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeProjectPolicy, RedisKeys } from '@gateway/shared';
import { ProjectionRebuilder } from '../src/keys/projection-rebuild.js';
import { ctlInProcess } from './ctl-in-process.js';
import { startHarness, type Harness } from './harness.js';

/**
 * The project setting `unsupported_params` (docs/management-api.md#unsupported-parameters) through
 * the management API: `drop` when unset, set with POST or PATCH, validated, stored in its column
 * (migration 0019, whose check refuses any other value), projected into the project's policy only
 * when `refuse` (absent is drop, so a proxy that predates the setting reads the same policy), kept
 * by the projection rebuild, and set by gatewayctl's `--unsupported-params`.
 */
let h: Harness;
let keys: RedisKeys;
let dir: string;
beforeAll(async () => {
  h = await startHarness('unsupported-params');
  keys = new RedisKeys(h.prefix);
  dir = mkdtempSync(join(tmpdir(), 'unsupported-params-'));
});
afterAll(async () => {
  await h?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

async function newProject(name: string, extra: Record<string, unknown> = {}) {
  const created = await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name, ...extra } });
  expect(created.status, created.text).toBe(201);
  return created.body as { id: string; unsupported_params: string };
}

async function rawPolicy(id: string): Promise<string> {
  return (await h.redis.get(keys.projectPolicy(id))) as string;
}

async function column(id: string): Promise<string | null> {
  const [row] = await h.sql<{ unsupported_params: string | null }[]>`select unsupported_params from projects where id = ${id}`;
  return row!.unsupported_params;
}

const get = async (id: string) => (await h.api('GET', `/v1/projects/${id}`, { token: h.adminToken })).body;
const patch = (id: string, body: unknown) => h.api('PATCH', `/v1/projects/${id}`, { token: h.adminToken, body });

describe('the unsupported_params setting', () => {
  it('is drop by default, in every answer, and is not projected', async () => {
    const project = await newProject('unsupported-default');
    expect(project.unsupported_params).toBe('drop');
    expect((await get(project.id)).unsupported_params).toBe('drop');
    const listed = (await h.api('GET', '/v1/projects', { token: h.adminToken })).body.data.find((p: { id: string }) => p.id === project.id);
    expect(listed.unsupported_params).toBe('drop');
    expect(await column(project.id)).toBeNull();
    expect(await rawPolicy(project.id)).not.toContain('unsupported_params');
    expect(decodeProjectPolicy(await rawPolicy(project.id)).unsupported_params).toBeUndefined();
  });

  it('is set with PATCH, projected only when refuse, and reset with null', async () => {
    const { id } = await newProject('unsupported-patch');

    const refuse = await patch(id, { unsupported_params: 'refuse' });
    expect(refuse.status, refuse.text).toBe(200);
    expect(refuse.body.unsupported_params).toBe('refuse');
    expect((await get(id)).unsupported_params).toBe('refuse');
    expect(await column(id)).toBe('refuse');
    expect(decodeProjectPolicy(await rawPolicy(id)).unsupported_params).toBe('refuse');

    // Another field left out leaves it as it is.
    expect((await patch(id, { max_tokens_cap: 100 })).body.unsupported_params).toBe('refuse');
    expect(decodeProjectPolicy(await rawPolicy(id)).unsupported_params).toBe('refuse');

    const drop = await patch(id, { unsupported_params: 'drop' });
    expect(drop.body.unsupported_params).toBe('drop');
    expect(await column(id)).toBe('drop');
    expect(await rawPolicy(id)).not.toContain('unsupported_params');

    await patch(id, { unsupported_params: 'refuse' });
    const reset = await patch(id, { unsupported_params: null });
    expect(reset.status).toBe(200);
    expect(reset.body.unsupported_params).toBe('drop');
    expect(await column(id)).toBeNull();
    expect(await rawPolicy(id)).not.toContain('unsupported_params');
  });

  it('is set on create, and kept with the other settings', async () => {
    const project = await newProject('unsupported-create', { unsupported_params: 'refuse', model_aliases: { 'gpt-6': 'mock-1' } });
    expect(project.unsupported_params).toBe('refuse');
    const policy = decodeProjectPolicy(await rawPolicy(project.id));
    expect(policy.unsupported_params).toBe('refuse');
    expect(policy.model_aliases).toEqual({ 'gpt-6': 'mock-1' });
  });

  it('refuses any other value with a 400 naming the field, and changes nothing', async () => {
    const { id } = await newProject('unsupported-invalid', { unsupported_params: 'refuse' });
    for (const value of ['reject', 'REFUSE', 'Drop', '', true, 0, ['refuse'], { mode: 'refuse' }]) {
      const res = await patch(id, { unsupported_params: value });
      expect(res.status, JSON.stringify(value)).toBe(400);
      expect(res.body.error.code).toBe('INVALID_REQUEST');
      expect(res.body.error.type).toBe('invalid_request_error');
      expect(res.body.error.param, JSON.stringify(value)).toBe('unsupported_params');
    }
    const created = await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: 'unsupported-invalid-2', unsupported_params: 'strict' } });
    expect(created.status).toBe(400);
    expect(created.body.error.param).toBe('unsupported_params');
    expect((await get(id)).unsupported_params).toBe('refuse');
    expect(decodeProjectPolicy(await rawPolicy(id)).unsupported_params).toBe('refuse');
  });

  it('is refused by the column itself for any other value (migration 0019)', async () => {
    const { id } = await newProject('unsupported-column');
    await expect(h.sql`update projects set unsupported_params = 'strict' where id = ${id}`).rejects.toThrow(/check constraint/);
    expect(await column(id)).toBeNull();
  });

  it('is projected by the rebuild from the column', async () => {
    const { id } = await newProject('unsupported-rebuild');
    // Changed in Postgres while its Redis step never happened (Redis was away).
    await h.sql`update projects set unsupported_params = 'refuse' where id = ${id}`;
    expect(decodeProjectPolicy(await rawPolicy(id)).unsupported_params).toBeUndefined();
    await new ProjectionRebuilder(h.cp.ctx.redis, keys, pino({ level: 'silent' })).run(h.cp.ctx.sql);
    expect(decodeProjectPolicy(await rawPolicy(id)).unsupported_params).toBe('refuse');
  });

  it('is announced in the OpenAPI document, on the bodies and on the answer', async () => {
    const doc = (await h.api('GET', '/openapi.json')).body;
    const project = doc.components.schemas.Project;
    expect(project.required).toContain('unsupported_params');
    expect(project.properties.unsupported_params.enum).toEqual(['drop', 'refuse']);
    const body = (path: string, method: string) => doc.paths[path][method].requestBody.content['application/json'].schema;
    for (const [path, method] of [['/v1/projects', 'post'], ['/v1/projects/{id}', 'patch']] as const) {
      expect(body(path, method).properties.unsupported_params.enum, `${method} ${path}`).toEqual(['drop', 'refuse', null]);
    }
  });
});

describe('gatewayctl --unsupported-params', () => {
  const ctl = (args: string[]) => ctlInProcess(h, dir, args);

  it('sets the field on create and update, and refuses another value before any request', async () => {
    const created = await ctl(['projects', 'create', 'cli-unsupported', '--unsupported-params', 'refuse']);
    expect(created.code, created.stderr).toBe(0);
    const project = JSON.parse(created.stdout);
    expect(project.unsupported_params).toBe('refuse');
    expect(decodeProjectPolicy(await rawPolicy(project.id)).unsupported_params).toBe('refuse');

    const updated = await ctl(['projects', 'update', 'cli-unsupported', '--unsupported-params', 'drop']);
    expect(updated.code, updated.stderr).toBe(0);
    expect(JSON.parse(updated.stdout).unsupported_params).toBe('drop');
    expect(await rawPolicy(project.id)).not.toContain('unsupported_params');

    const bad = await ctl(['projects', 'update', 'cli-unsupported', '--unsupported-params', 'reject']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--unsupported-params must be one of drop, refuse, not "reject"');
    expect((await get(project.id)).unsupported_params).toBe('drop');
  });
});
