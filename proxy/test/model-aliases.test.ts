import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness as startControlPlane, type Harness as ControlPlaneHarness } from '../../control-plane/test/harness.js';
import { startWriter, type Writer } from '../../control-plane/src/writer/start-writer.js';
import { TEST_REDIS_URL } from '../../test-support/databases.js';
import { eventually } from '../../test-support/processes.js';
import { freePort } from '../../test-support/services.js';
import { startProxy, type Proxy } from '../src/proxy.js';

/**
 * A project's `model_aliases`: the model ids its clients ask for (an agent's default) served by
 * other models, on every model endpoint, the allow-list applied to the model served, the records
 * naming both (`model` served, `requested_model` asked) through the writer into PostgreSQL and
 * back out of the management API.
 */
let cp: ControlPlaneHarness;
let writer: Writer;
let proxy: Proxy;

beforeAll(async () => {
  cp = await startControlPlane('aliases');
  const dir = mkdtempSync(join(tmpdir(), 'gw-aliases-'));
  const providers = join(dir, 'providers.yaml');
  writeFileSync(providers, 'providers:\n  - { name: mock, type: mock, models: [cheap, dear, claude-sonnet-cheap] }\n');
  const env = { REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: cp.prefix, LOG_LEVEL: 'silent' };
  proxy = await startProxy({ ...env, PROXY_PORT: '0', METRICS_PORT: '0', PROXY_HOST: '127.0.0.1', GATEWAY_CONFIG: providers });
  writer = await startWriter({ ...env, DATABASE_URL: cp.db.url, WRITER_PORT: String(await freePort()), RECORD_FLUSH_MS: '50' });
});

afterAll(async () => {
  await proxy?.drain();
  await writer?.close();
  await cp?.close();
});

async function project(settings: Record<string, unknown>): Promise<{ id: string; key: string }> {
  const created = await cp.api('POST', '/v1/projects', { token: cp.adminToken, body: { name: `aliases ${Math.random()}`, ...settings } });
  expect(created.status, created.text).toBe(201);
  const key = await cp.api('POST', `/v1/projects/${created.body.id}/keys`, { token: cp.adminToken, body: { name: 'k' } });
  return { id: created.body.id, key: key.body.key };
}

async function usageOf(projectId: string, count: number): Promise<any[]> {
  let rows: any[] = [];
  await eventually(async () => {
    const res = await cp.api('GET', `/v1/usage?project_id=${projectId}&limit=100`, { token: cp.adminToken });
    rows = res.body.data as any[];
    return rows.length >= count;
  }, 'usage records written');
  return rows;
}

describe('model aliases', () => {
  it('serves an asked model by its alias on every endpoint, the allow-list on the served model, both in the records', async () => {
    const aliases = { dear: 'cheap', 'claude-opus-9': 'claude-sonnet-cheap' };
    const p = await project({ model_aliases: aliases, allowed_models: ['cheap', 'claude-sonnet-cheap'] });
    const shown = await cp.api('GET', `/v1/projects/${p.id}`, { token: cp.adminToken });
    expect(shown.body.model_aliases).toEqual(aliases);

    const openai = new OpenAI({ apiKey: p.key, baseURL: `http://127.0.0.1:${proxy.port}/v1`, maxRetries: 0 });
    const chat = await openai.chat.completions.create({ model: 'dear', messages: [{ role: 'user', content: 'hi' }] });
    expect(chat.choices[0]!.message.content).toContain('hi');
    const anthropic = new Anthropic({ apiKey: p.key, baseURL: `http://127.0.0.1:${proxy.port}`, maxRetries: 0 });
    const message = await anthropic.messages.create({ model: 'claude-opus-9', max_tokens: 20, messages: [{ role: 'user', content: 'hello' }] });
    expect(message.model).toBe('claude-opus-9');
    // Asked directly, a model the allow-list leaves out is still refused.
    const refused = await openai.chat.completions.create({ model: 'dear-direct', messages: [{ role: 'user', content: 'x' }] }).catch((e: { status: number }) => e);
    expect((refused as { status: number }).status).toBe(404);

    const rows = await usageOf(p.id, 2);
    expect(rows.map((r) => [r.model, r.requested_model]).sort()).toEqual([
      ['cheap', 'dear'],
      ['claude-sonnet-cheap', 'claude-opus-9'],
    ]);
  });

  it('leaves models without an alias alone, and records no requested_model for them', async () => {
    const p = await project({ model_aliases: { dear: 'cheap' } });
    const openai = new OpenAI({ apiKey: p.key, baseURL: `http://127.0.0.1:${proxy.port}/v1`, maxRetries: 0 });
    await openai.chat.completions.create({ model: 'cheap', messages: [{ role: 'user', content: 'hi' }] });
    const [row] = await usageOf(p.id, 1);
    expect(row).toMatchObject({ model: 'cheap', requested_model: null });
  });

  it('answers an alias to a model no provider serves with 404, the project\'s setting named', async () => {
    const p = await project({ model_aliases: { dear: 'gone' } });
    const res = await fetch(`http://127.0.0.1:${proxy.port}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${p.key}` },
      body: JSON.stringify({ model: 'dear', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain('gone');
  });

  it('takes the setting on PATCH, replaced whole, null for none, and refuses what is no map of ids', async () => {
    const p = await project({});
    expect((await cp.api('PATCH', `/v1/projects/${p.id}`, { token: cp.adminToken, body: { model_aliases: { a: 'cheap' } } })).body.model_aliases).toEqual({ a: 'cheap' });
    const cleared = await cp.api('PATCH', `/v1/projects/${p.id}`, { token: cp.adminToken, body: { model_aliases: null } });
    expect(cleared.body.model_aliases).toBeUndefined();
    expect((await cp.api('PATCH', `/v1/projects/${p.id}`, { token: cp.adminToken, body: { model_aliases: { a: 7 } } })).status).toBe(400);
    expect((await cp.api('PATCH', `/v1/projects/${p.id}`, { token: cp.adminToken, body: { model_aliases: ['a'] } })).status).toBe(400);
  });
});
