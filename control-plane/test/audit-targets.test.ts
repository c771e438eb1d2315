import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './harness.js';

/**
 * Management audit events name what they acted on: an account admin reading the trail sees
 * "alice disabled bob", not only "alice disabled an account". Each action is made through the API
 * and its event read back through GET /v1/audit.
 */
let h: Harness;

beforeAll(async () => {
  h = await startHarness('audittarget', { env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
});

afterAll(async () => {
  await h?.close();
});

interface Event {
  type: string;
  actor: string | null;
  project_id: string | null;
  target: { type: string; id: string } | null;
}

async function events(): Promise<Event[]> {
  const res = await h.api('GET', '/v1/audit?limit=1000&order_asc=timestamp', { token: h.adminToken });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

async function ok(method: string, path: string, body?: unknown): Promise<any> {
  const res = await h.api(method, path, { token: h.adminToken, ...(body === undefined ? {} : { body }) });
  expect(res.status, res.text).toBeLessThan(300);
  return res.body;
}

describe('management audit events', () => {
  it('name the account, member, project, key or webhook they acted on', async () => {
    const user = await ok('POST', '/v1/users', { email: 'target@example.test', password: 'a long enough password 1', role: 'member' });
    await ok('PATCH', `/v1/users/${user.id}`, { disabled: true });
    await ok('POST', `/v1/users/${user.id}/password`, { new_password: 'another long password 2' });
    const project = await ok('POST', '/v1/projects', { name: 'targeted' });
    await ok('PATCH', `/v1/projects/${project.id}`, { quota_tokens: 1000 });
    await ok('POST', `/v1/projects/${project.id}/members`, { user_id: user.id, role: 'viewer' });
    await ok('DELETE', `/v1/projects/${project.id}/members/${user.id}`);
    const key = await ok('POST', `/v1/projects/${project.id}/keys`, { name: 'targeted key' });
    await ok('DELETE', `/v1/projects/${project.id}/keys/${key.id}`);
    const hook = await ok('POST', `/v1/projects/${project.id}/webhooks`, { url: 'http://127.0.0.1:9/hook', events: ['key.created'] });
    await ok('PATCH', `/v1/projects/${project.id}/webhooks/${hook.id}`, { enabled: false });
    await ok('DELETE', `/v1/projects/${project.id}/webhooks/${hook.id}`);
    await ok('DELETE', `/v1/projects/${project.id}`);

    const seen = (await events()).filter((e) => e.type !== 'signin.succeeded').map((e) => [e.type, e.target]);
    expect(seen).toEqual([
      ['user.created', { type: 'user', id: user.id }],
      ['user.disabled', { type: 'user', id: user.id }],
      ['password.reset', { type: 'user', id: user.id }],
      ['project.created', { type: 'project', id: project.id }],
      ['project.updated', { type: 'project', id: project.id }],
      ['member.added', { type: 'member', id: user.id }],
      ['member.removed', { type: 'member', id: user.id }],
      ['key.created', { type: 'key', id: key.id }],
      ['key.deleted', { type: 'key', id: key.id }],
      ['webhook.created', { type: 'webhook', id: hook.id }],
      ['webhook.disabled', { type: 'webhook', id: hook.id }],
      ['webhook.deleted', { type: 'webhook', id: hook.id }],
      ['project.deleted', { type: 'project', id: project.id }],
    ]);
    // The actor stays who did it, never the target.
    expect((await events()).filter((e) => e.type !== 'signin.succeeded').every((e) => e.actor === h.adminId)).toBe(true);
  });

  it('a sign-in names no target: the account is its actor', async () => {
    const signins = (await events()).filter((e) => e.type === 'signin.succeeded');
    expect(signins.length).toBeGreaterThan(0);
    expect(signins.every((e) => e.target === null && e.actor === h.adminId)).toBe(true);
  });
});
