import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './harness.js';
import { eventually, startReceiver, startWebhookWriter, type Receiver, type TestWriter } from './webhook-fixtures.js';

/**
 * The webhook routes as a client meets them, on a control plane with the default address rule
 * (WEBHOOK_ALLOW_PRIVATE unset): what a webhook may be, who may manage it, which addresses are
 * refused at creation, and that a delivery refuses them again when it connects.
 */
let h: Harness;
let receiver: Receiver;
let projectId: string;
type User = Awaited<ReturnType<Harness['createUser']>>;
let viewer: User;
let member: User;
let projectAdmin: User;
let outsider: User;

const PUBLIC_URL = 'https://203.0.114.7/hooks';
// A name that resolves nowhere: accepted, its address checked at each delivery.
const UNRESOLVED_URL = 'https://hooks.example.invalid/gateway';

beforeAll(async () => {
  h = await startHarness('webhooksapi', { captureLogs: true });
  receiver = await startReceiver();
  projectId = (await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: 'api' } })).body.id;
  [viewer, member, projectAdmin, outsider] = await Promise.all([h.createUser(), h.createUser(), h.createUser(), h.createUser()]);
  for (const [user, role] of [
    [viewer, 'viewer'],
    [member, 'member'],
    [projectAdmin, 'admin'],
  ] as const) {
    expect((await h.api('POST', `/v1/projects/${projectId}/members`, { token: h.adminToken, body: { user_id: user.id, role } })).status).toBe(201);
  }
});

afterAll(async () => {
  await receiver?.close();
  await h?.close();
});

const create = (body: object, token = h.adminToken, project = projectId) => h.api('POST', `/v1/projects/${project}/webhooks`, { token, body });

describe('creating a webhook', () => {
  it('answers the secret once, generated (32 random bytes) or the caller\'s own, and lists without it', async () => {
    const generated = await create({ url: PUBLIC_URL, events: ['key.created', 'quota.threshold'] });
    expect(generated.status, generated.text).toBe(201);
    expect(Object.keys(generated.body).sort()).toEqual(['created_at', 'enabled', 'events', 'id', 'project_id', 'secret', 'url']);
    expect(generated.body).toMatchObject({ project_id: projectId, url: PUBLIC_URL, events: ['key.created', 'quota.threshold'], enabled: true });
    expect(generated.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(generated.body.secret.slice(6), 'base64')).toHaveLength(32);

    const own = `whsec_${randomBytes(48).toString('base64')}`;
    const given = await create({ url: UNRESOLVED_URL, events: ['gateway.request.failed'], secret: own });
    expect(given.status, given.text).toBe(201);
    expect(given.body.secret).toBe(own);
    const [stored] = await h.sql<{ secret: string }[]>`select secret from webhooks where id = ${given.body.id}`;
    expect(stored?.secret).toBe(own);

    const list = await h.api('GET', `/v1/projects/${projectId}/webhooks`, { token: viewer.token });
    expect(list.status).toBe(200);
    expect(list.body.data.map((x: { id: string }) => x.id)).toEqual([generated.body.id, given.body.id]);
    expect(Object.keys(list.body.data[0]).sort()).toEqual(['created_at', 'disabled_reason', 'enabled', 'events', 'id', 'project_id', 'url']);
    expect(list.text).not.toContain(generated.body.secret.slice(6));
    expect(list.text).not.toContain(own.slice(6));
    for (const line of h.logs) {
      expect(line).not.toContain(generated.body.secret.slice(6));
      expect(line).not.toContain(own.slice(6));
    }
    const [audit] = (await h.api('GET', `/v1/audit?project_id=${projectId}&type=webhook.created`, { token: h.adminToken })).body.data;
    expect(audit).toMatchObject({ type: 'webhook.created', outcome: 'success', status: 201, actor: h.adminId });
  });

  it('refuses malformed URLs, secrets and event lists with a 400 naming the field', async () => {
    const cases: [object, string][] = [
      [{ url: 'ftp://hooks.example.com/x', events: ['key.created'] }, 'url'],
      [{ url: 'https://user:pass@hooks.example.com/x', events: ['key.created'] }, 'url'],
      [{ url: 'https://hooks.example.com/x#part', events: ['key.created'] }, 'url'],
      [{ url: 'not a url', events: ['key.created'] }, 'url'],
      [{ url: `https://hooks.example.com/${'a'.repeat(2048)}`, events: ['key.created'] }, 'url'],
      [{ url: PUBLIC_URL, events: [] }, 'events'],
      [{ url: PUBLIC_URL, events: ['key.renamed'] }, 'events.0'],
      [{ url: PUBLIC_URL, events: ['key.created', 'key.created'] }, 'events'],
      [{ url: PUBLIC_URL }, 'events'],
      [{ url: PUBLIC_URL, events: ['key.created'], secret: 'hunter2hunter2' }, 'secret'],
      [{ url: PUBLIC_URL, events: ['key.created'], secret: `whsec_${randomBytes(16).toString('base64')}` }, 'secret'],
      [{ url: PUBLIC_URL, events: ['key.created'], secret: `whsec_${randomBytes(65).toString('base64')}` }, 'secret'],
      [{ url: PUBLIC_URL, events: ['key.created'], enabled: false }, 'enabled'],
    ];
    for (const [body, param] of cases) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_REQUEST', param });
    }
  });

  it('refuses a host that is or resolves to a private address, without WEBHOOK_ALLOW_PRIVATE', async () => {
    for (const url of [
      `${receiver.base}/hook`,
      'http://localhost:9/hook',
      'http://[::1]/hook',
      'http://[::ffff:127.0.0.1]/hook',
      'http://10.1.2.3/hook',
      'http://192.168.0.10/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://[fd00::1]/hook',
      'http://0.0.0.0/hook',
      'http://2130706433/hook',
      'http://224.0.0.1/hook',
    ]) {
      const res = await create({ url, events: ['key.created'] });
      expect(res.status, url).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_REQUEST', param: 'url' });
      expect(res.body.error.message).toMatch(/public address/);
    }
  });

  it('lets project admins and owners manage webhooks; members and viewers only read; others see no project', async () => {
    expect((await create({ url: PUBLIC_URL, events: ['key.created'] }, viewer.token)).status).toBe(403);
    expect((await create({ url: PUBLIC_URL, events: ['key.created'] }, member.token)).status).toBe(403);
    expect((await create({ url: PUBLIC_URL, events: ['key.created'] }, outsider.token)).status).toBe(404);
    const made = await create({ url: PUBLIC_URL, events: ['key.created'] }, projectAdmin.token);
    expect(made.status).toBe(201);
    const path = `/v1/projects/${projectId}/webhooks/${made.body.id}`;
    expect((await h.api('GET', `${path}/deliveries`, { token: viewer.token })).status).toBe(200);
    expect((await h.api('GET', `/v1/projects/${projectId}/webhooks`, { token: outsider.token })).status).toBe(404);
    expect((await h.api('GET', `${path}/deliveries`, { token: outsider.token })).status).toBe(404);
    expect((await h.api('PATCH', path, { token: member.token, body: { enabled: false } })).status).toBe(403);
    expect((await h.api('DELETE', path, { token: viewer.token })).status).toBe(403);
    // A refusal is audited like the action would have been.
    const refused = (await h.api('GET', `/v1/audit?project_id=${projectId}&type=webhook.created&outcome=policy_blocked`, { token: h.adminToken })).body.data;
    expect(refused.map((e: { actor: string }) => e.actor).sort()).toEqual([member.id, viewer.id].sort());

    expect((await h.api('PATCH', path, { token: projectAdmin.token, body: { events: ['key.deleted', 'project.updated'] } })).body.events).toEqual(['key.deleted', 'project.updated']);
    expect((await h.api('PATCH', path, { token: projectAdmin.token, body: {} })).status).toBe(400);
    expect((await h.api('DELETE', path, { token: projectAdmin.token })).status).toBe(204);
    expect((await h.api('DELETE', path, { token: projectAdmin.token })).status).toBe(404);
    expect((await h.api('GET', `${path}/deliveries`, { token: viewer.token })).status).toBe(404);
    const deleted = (await h.api('GET', `/v1/audit?project_id=${projectId}&type=webhook.deleted&outcome=success`, { token: h.adminToken })).body.data;
    expect(deleted).toHaveLength(1);
    expect(deleted[0]).toMatchObject({ actor: projectAdmin.id, status: 204 });
  });

  it("answers 404 for another project's webhook", async () => {
    const other = (await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: 'other' } })).body.id;
    const hook = (await create({ url: PUBLIC_URL, events: ['key.created'] }, h.adminToken, other)).body.id;
    expect((await h.api('DELETE', `/v1/projects/${projectId}/webhooks/${hook}`, { token: h.adminToken })).status).toBe(404);
    expect((await h.api('GET', `/v1/projects/${projectId}/webhooks/${hook}/deliveries`, { token: h.adminToken })).status).toBe(404);
  });
});

describe('delivering to a name that now resolves to a private address', () => {
  let w: TestWriter;
  beforeAll(async () => {
    w = await startWebhookWriter(h, {}, { webhooks: { retryDelaysMs: [], sweepIntervalMs: 3_600_000 } });
  });
  afterAll(async () => w?.close());

  it('refuses at connect time: the check is made again on what the name resolves to then (DNS rebinding)', async () => {
    const project = (await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: 'rebound' } })).body.id;
    const byName = await create({ url: UNRESOLVED_URL, events: ['key.created'] }, h.adminToken, project);
    const byLiteral = await create({ url: PUBLIC_URL, events: ['key.created'] }, h.adminToken, project);
    // Since their creation the name has come to point at this machine, and the literal was edited in
    // Postgres: the creation's check is long past.
    const port = new URL(receiver.base).port;
    await h.sql`update webhooks set url = ${`http://localhost:${port}/rebound`} where id = ${byName.body.id}`;
    await h.sql`update webhooks set url = ${`${receiver.base}/literal`} where id = ${byLiteral.body.id}`;
    expect((await h.api('POST', `/v1/projects/${project}/keys`, { token: h.adminToken, body: { name: 'k' } })).status).toBe(201);
    for (const hook of [byName.body.id, byLiteral.body.id]) {
      const [delivery] = await eventually('the delivery failed', async () => {
        const data = (await h.api('GET', `/v1/projects/${project}/webhooks/${hook}/deliveries`, { token: h.adminToken })).body.data;
        return data[0]?.status === 'failed' ? data : undefined;
      });
      expect(delivery).toMatchObject({ attempts: 1, last_status: null });
      expect(delivery.last_error).toMatch(/non-public address/);
    }
    expect(receiver.at('/rebound')).toEqual([]);
    expect(receiver.at('/literal')).toEqual([]);
  });
});
