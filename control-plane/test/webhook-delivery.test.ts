import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type ApiResponse, type Harness } from './harness.js';
import { eventually, signatureValid, startReceiver, startWebhookWriter, webhookJobs, type Receiver, type TestWriter } from './webhook-fixtures.js';

/**
 * Webhook deliveries end to end: a control plane and a writer (with its webhook worker) on their
 * own database and Redis prefix, and a real HTTP endpoint on 127.0.0.1 (so private addresses are
 * allowed here; webhooks-api.test.ts covers the rule). Retries are shortened to 50 ms, 3 attempts,
 * and a webhook is disabled after 2 deliveries in a row failed.
 */
let h: Harness;
let receiver: Receiver;
let w: TestWriter;
let projectId: string;
const secrets: string[] = [];

interface Delivery {
  id: string;
  event_id: string;
  event_type: string;
  status: string;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
}

beforeAll(async () => {
  h = await startHarness('webhookdelivery', { env: { WEBHOOK_ALLOW_PRIVATE: 'true' }, captureLogs: true });
  receiver = await startReceiver();
  w = await startWebhookWriter(h, { WEBHOOK_ALLOW_PRIVATE: 'true' }, {
    webhooks: { retryDelaysMs: [50, 50], disableAfter: 2, timeoutMs: 5_000, sweepIntervalMs: 3_600_000, failedRequestsWindowMs: 3_600_000 },
  });
  projectId = (await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: 'hooked' } })).body.id;
});

afterAll(async () => {
  await w?.close();
  await receiver?.close();
  await h?.close();
});

async function createWebhook(path: string, events: string[], project = projectId): Promise<{ id: string; secret: string }> {
  const res = await h.api('POST', `/v1/projects/${project}/webhooks`, { token: h.adminToken, body: { url: `${receiver.base}${path}`, events } });
  expect(res.status, res.text).toBe(201);
  secrets.push(res.body.secret);
  return { id: res.body.id, secret: res.body.secret };
}

async function deliveries(webhookId: string, query = ''): Promise<Delivery[]> {
  const res = await h.api('GET', `/v1/projects/${projectId}/webhooks/${webhookId}/deliveries${query}`, { token: h.adminToken });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

/** The webhook's deliveries once there are `count` and none is pending. */
function settled(webhookId: string, count: number): Promise<Delivery[]> {
  return eventually(`${count} settled deliveries of ${webhookId}`, async () => {
    const all = await deliveries(webhookId);
    return all.length === count && all.every((d) => d.status !== 'pending') ? all : undefined;
  });
}

async function createKey(name: string): Promise<string> {
  const res = await h.api('POST', `/v1/projects/${projectId}/keys`, { token: h.adminToken, body: { name } });
  expect(res.status).toBe(201);
  return res.body.id;
}

describe('management events', () => {
  it('delivers key.created, key.deleted and project.updated, signed as Standard Webhooks says', async () => {
    const hook = await createWebhook('/management', ['key.created', 'key.deleted', 'project.updated']);
    const keyId = await createKey('signed');
    expect((await h.api('DELETE', `/v1/projects/${projectId}/keys/${keyId}`, { token: h.adminToken })).status).toBe(204);
    expect((await h.api('PATCH', `/v1/projects/${projectId}`, { token: h.adminToken, body: { name: 'hooked too', quota_tokens: 5000 } })).status).toBe(200);

    const log = await settled(hook.id, 3);
    expect(log.map((d) => [d.event_type, d.status, d.attempts, d.last_status, d.last_error])).toEqual([
      ['project.updated', 'delivered', 1, 200, null],
      ['key.deleted', 'delivered', 1, 200, null],
      ['key.created', 'delivered', 1, 200, null],
    ]);
    const received = receiver.at('/management');
    expect(received).toHaveLength(3);
    const bodies = received.map((r) => JSON.parse(r.body));
    expect(bodies.map((b) => b.type).sort()).toEqual(['key.created', 'key.deleted', 'project.updated']);
    for (const request of received) {
      expect(signatureValid(hook.secret, request)).toBe(true);
      // Any other secret, or a body changed by one character, fails the check.
      expect(signatureValid(secrets[0] === hook.secret ? 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' : (secrets[0] as string), request)).toBe(false);
      expect(signatureValid(hook.secret, { ...request, body: `${request.body} ` })).toBe(false);
      expect(request.headers['webhook-id']).toMatch(/^msg_[A-Za-z0-9_-]+$/);
      expect(Number(request.headers['webhook-timestamp'])).toBeGreaterThan(Date.now() / 1000 - 300);
      expect(request.headers['webhook-timestamp']).toMatch(/^\d+$/);
      expect(request.headers['content-type']).toBe('application/json');
      const body = JSON.parse(request.body);
      expect(Object.keys(body)).toEqual(['type', 'timestamp', 'data']);
      expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp);
    }
    const byType = Object.fromEntries(bodies.map((b) => [b.type, b.data]));
    expect(byType['key.created']).toEqual({
      project_id: projectId,
      key: { id: keyId, name: 'signed', prefix: expect.any(String), created_by: h.adminId, created_at: expect.any(String), expires_at: null },
      actor: h.adminId,
    });
    expect(byType['key.deleted'].key.id).toBe(keyId);
    expect(byType['project.updated']).toMatchObject({ project: { id: projectId, name: 'hooked too', quota_tokens: 5000 }, changed: ['name', 'quota_tokens'], actor: h.adminId });
    expect(byType['project.updated'].project).not.toHaveProperty('used_tokens');
    // The delivery log names each event by the id the endpoint saw.
    expect(log.map((d) => d.event_id).sort()).toEqual(received.map((r) => r.headers['webhook-id']).sort());
  });

  it('sends an event only to endpoints subscribed to its type', async () => {
    const onlyKeys = await createWebhook('/only-deletions', ['key.deleted']);
    await createKey('not announced there');
    const keyId = await createKey('announced there');
    await h.api('DELETE', `/v1/projects/${projectId}/keys/${keyId}`, { token: h.adminToken });
    const log = await settled(onlyKeys.id, 1);
    expect(log[0]?.event_type).toBe('key.deleted');
    expect(receiver.at('/only-deletions').map((r) => JSON.parse(r.body).type)).toEqual(['key.deleted']);
  });

  it('retries after a 500 with the same webhook-id and body, each attempt signed', async () => {
    receiver.answer('/flaky', (call) => ({ status: call === 1 ? 500 : 204 }));
    const hook = await createWebhook('/flaky', ['key.created']);
    await createKey('retried');
    const [delivery] = await settled(hook.id, 1);
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 2, last_status: 204, last_error: null, next_attempt_at: null });
    const [first, second] = receiver.at('/flaky');
    expect(receiver.at('/flaky')).toHaveLength(2);
    expect(first?.headers['webhook-id']).toBe(second?.headers['webhook-id']);
    expect(first?.body).toBe(second?.body);
    expect(signatureValid(hook.secret, first!)).toBe(true);
    expect(signatureValid(hook.secret, second!)).toBe(true);
  });

  it('never follows a redirect: every attempt fails with the 3xx and the target is never called', async () => {
    receiver.answer('/moved', () => ({ status: 302, headers: { location: `${receiver.base}/moved-target` } }));
    const hook = await createWebhook('/moved', ['key.created']);
    await createKey('redirected');
    const [delivery] = await settled(hook.id, 1);
    expect(delivery).toMatchObject({ status: 'failed', attempts: 3, last_status: 302, next_attempt_at: null });
    expect(delivery?.last_error).toMatch(/redirects are not followed/);
    expect(receiver.at('/moved')).toHaveLength(3);
    expect(receiver.at('/moved-target')).toHaveLength(0);
  });
});

describe('failures', () => {
  let otherProject: string;
  beforeAll(async () => {
    otherProject = (await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: 'failing' } })).body.id;
  });

  const patchProject = (name: string) => h.api('PATCH', `/v1/projects/${otherProject}`, { token: h.adminToken, body: { name } });
  const auditOf = async (type: string) =>
    (await h.api('GET', `/v1/audit?project_id=${otherProject}&type=${type}`, { token: h.adminToken })).body.data as { type: string; outcome: string; actor: string | null; request_id: string }[];
  const listed = async (id: string) =>
    ((await h.api('GET', `/v1/projects/${otherProject}/webhooks`, { token: h.adminToken })).body.data as { id: string; enabled: boolean; disabled_reason: string | null }[]).find(
      (x) => x.id === id,
    );
  const logOf = async (id: string) => (await h.api('GET', `/v1/projects/${otherProject}/webhooks/${id}/deliveries`, { token: h.adminToken })).body.data as Delivery[];

  it('disables a webhook after 2 deliveries in a row failed every attempt, audited, and sends it nothing more', async () => {
    receiver.answer('/down', 503);
    const hook = await createWebhook('/down', ['project.updated'], otherProject);
    await patchProject('failing 1');
    await eventually('the first delivery failed', async () => ((await logOf(hook.id))[0]?.status === 'failed' ? true : undefined));
    expect((await listed(hook.id))?.enabled).toBe(true);
    await patchProject('failing 2');
    await eventually('the webhook disabled', async () => ((await listed(hook.id))?.enabled === false ? true : undefined));
    const log = await logOf(hook.id);
    expect(log.map((d) => [d.status, d.attempts, d.last_status, d.last_error])).toEqual([
      ['failed', 3, 503, 'HTTP 503'],
      ['failed', 3, 503, 'HTTP 503'],
    ]);
    expect((await listed(hook.id))?.disabled_reason).toMatch(/2 deliveries in a row failed/);
    const [disabled] = await auditOf('webhook.disabled');
    expect(disabled).toMatchObject({ type: 'webhook.disabled', outcome: 'error', actor: null, target: { type: 'webhook', id: hook.id }, request_id: log[0]?.event_id });
    expect(receiver.at('/down')).toHaveLength(6);

    // Disabled: a new event makes no delivery for it.
    await patchProject('failing 3');
    const plain = await createWebhook('/plain', ['project.updated'], otherProject);
    await patchProject('failing 4');
    await eventually('the other endpoint got its event', async () => ((await logOf(plain.id)).some((d) => d.status === 'delivered') ? true : undefined));
    expect(await logOf(hook.id)).toHaveLength(2);

    // Enabled again by hand: audited, and deliveries resume.
    receiver.answer('/down', 200);
    const enabled = await h.api('PATCH', `/v1/projects/${otherProject}/webhooks/${hook.id}`, { token: h.adminToken, body: { enabled: true } });
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({ id: hook.id, enabled: true, disabled_reason: null });
    expect(enabled.body).not.toHaveProperty('secret');
    expect((await auditOf('webhook.enabled'))[0]).toMatchObject({ outcome: 'success', actor: h.adminId });
    await patchProject('failing 5');
    await eventually('delivered after re-enabling', async () => ((await logOf(hook.id))[0]?.status === 'delivered' ? true : undefined));
  });

  it('disables a webhook at once when its endpoint answers 410 Gone', async () => {
    receiver.answer('/gone', 410);
    const hook = await createWebhook('/gone', ['project.updated'], otherProject);
    await patchProject('gone');
    await eventually('the webhook disabled', async () => ((await listed(hook.id))?.enabled === false ? true : undefined));
    expect(receiver.at('/gone')).toHaveLength(1);
    expect((await listed(hook.id))?.disabled_reason).toMatch(/410 Gone/);
    expect((await logOf(hook.id))[0]).toMatchObject({ status: 'failed', attempts: 1, last_status: 410 });
  });

  it('disabling by hand ends the pending deliveries, audited with the actor', async () => {
    const hook = await createWebhook('/paused', ['project.updated'], otherProject);
    // The writer takes no job meanwhile, so the delivery is still pending when the webhook is disabled.
    await w.writer.webhookWorker.worker.pause(true);
    try {
      await patchProject('before the pause');
      expect((await logOf(hook.id)).map((d) => [d.status, d.attempts])).toEqual([['pending', 0]]);
      const off = await h.api('PATCH', `/v1/projects/${otherProject}/webhooks/${hook.id}`, { token: h.adminToken, body: { enabled: false } });
      expect(off.body).toMatchObject({ enabled: false, disabled_reason: null });
    } finally {
      w.writer.webhookWorker.worker.resume();
    }
    expect((await logOf(hook.id)).map((d) => [d.status, d.attempts, d.last_error, d.next_attempt_at])).toEqual([['failed', 0, 'the webhook was disabled', null]]);
    const [audit] = await auditOf('webhook.disabled');
    expect(audit).toMatchObject({ outcome: 'success', actor: h.adminId });
    await patchProject('while disabled');
    expect(await logOf(hook.id)).toHaveLength(1);
    // The job queued for it found nothing to send once the worker resumed.
    const jobs = webhookJobs(h);
    try {
      const [delivery] = await logOf(hook.id);
      await eventually('the job done', async () => ((await jobs.queue.getJob(`d-${delivery?.id}-1`)) === undefined ? true : undefined));
    } finally {
      await jobs.close();
    }
    expect(receiver.at('/paused')).toEqual([]);
  });
});

describe('the sweep', () => {
  it('queues again a delivery whose job Redis lost, with the same webhook-id', async () => {
    const hook = await createWebhook('/swept', ['key.created']);
    const jobs = webhookJobs(h);
    try {
      await w.writer.webhookWorker.worker.pause(true);
      let deliveryId: string;
      try {
        await createKey('lost in Redis');
        const [pending] = await deliveries(hook.id);
        expect(pending).toMatchObject({ status: 'pending', attempts: 0 });
        deliveryId = pending!.id;
        // Redis lost the job (a restart without persistence, say).
        await (await jobs.queue.getJob(`d-${deliveryId}-1`))?.remove();
        expect(await jobs.queue.getJob(`d-${deliveryId}-1`)).toBeUndefined();
      } finally {
        w.writer.webhookWorker.worker.resume();
      }
      // Not yet overdue: the sweep leaves it alone.
      await w.writer.webhookWorker.sweep();
      expect(await jobs.queue.getJob(`d-${deliveryId}-1`)).toBeUndefined();
      await h.sql`update webhook_deliveries set next_attempt_at = now() - interval '2 minutes' where id = ${deliveryId}`;
      await w.writer.webhookWorker.sweep();
      const [delivered] = await settled(hook.id, 1);
      expect(delivered).toMatchObject({ id: deliveryId, status: 'delivered', attempts: 1 });
      expect(receiver.at('/swept').map((r) => r.headers['webhook-id'])).toEqual([delivered?.event_id]);
    } finally {
      await jobs.close();
    }
  });
});

describe('the delivery log', () => {
  it('pages newest first with an opaque cursor, and filters by status', async () => {
    const hook = await createWebhook('/paged', ['key.created']);
    for (let i = 0; i < 5; i++) await createKey(`paged ${i}`);
    const all = await settled(hook.id, 5);
    const seen: Delivery[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 10; page++) {
      const res: ApiResponse = await h.api('GET', `/v1/projects/${projectId}/webhooks/${hook.id}/deliveries?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { token: h.adminToken });
      expect(res.status).toBe(200);
      seen.push(...res.body.data);
      expect(res.body.has_more).toBe(res.body.next_cursor !== null);
      cursor = res.body.next_cursor;
      if (cursor === null) break;
    }
    expect(seen.map((d) => d.id)).toEqual(all.map((d) => d.id));
    expect(await deliveries(hook.id, '?status=failed')).toEqual([]);
    expect(await deliveries(hook.id, '?status=delivered')).toHaveLength(5);
    const foreign = await h.api('GET', `/v1/projects/${projectId}/webhooks/${hook.id}/deliveries?cursor=${encodeURIComponent('eyJ4IjoxfQ.AAAA')}`, { token: h.adminToken });
    expect(foreign.status).toBe(400);
  });
});

describe('secrets', () => {
  it('appear in no response after creation and in no log line of the control plane or the writer', async () => {
    expect(secrets.length).toBeGreaterThan(5);
    const lists = [
      await h.api('GET', `/v1/projects/${projectId}/webhooks`, { token: h.adminToken }),
      await h.api('GET', `/v1/audit?project_id=${projectId}`, { token: h.adminToken }),
    ];
    const hooks = lists[0]!.body.data as { id: string }[];
    for (const hook of hooks) lists.push(await h.api('GET', `/v1/projects/${projectId}/webhooks/${hook.id}/deliveries`, { token: h.adminToken }));
    expect(w.logs.length).toBeGreaterThan(0);
    expect(h.logs.length).toBeGreaterThan(0);
    for (const secret of secrets) {
      const bare = secret.replace(/^whsec_/, '');
      for (const res of lists) expect(res.text).not.toContain(bare);
      for (const line of [...h.logs, ...w.logs]) expect(line).not.toContain(bare);
    }
    // Nor the answers' bodies.
    for (const line of w.logs) expect(line).not.toContain('answer body that must never be stored');
  });
});
