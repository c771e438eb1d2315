import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './harness.js';
import { eventually, startReceiver, startWebhookWriter, type Receiver, type TestWriter } from './webhook-fixtures.js';

/**
 * Webhook delivery is fair between projects: one project whose endpoint hangs cannot hold back
 * another's deliveries. The writer here makes at most 2 attempts at once, 1 per project, and waits
 * a minute for an answer, so without the per-project share the hanging project's first two
 * deliveries would hold both slots far longer than the test waits.
 */
let h: Harness;
let receiver: Receiver;
let w: TestWriter;

beforeAll(async () => {
  h = await startHarness('webhookfair', { env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  receiver = await startReceiver();
  w = await startWebhookWriter(h, { WEBHOOK_ALLOW_PRIVATE: 'true' }, {
    webhooks: { concurrency: 2, projectConcurrency: 1, projectDeferMs: 100, timeoutMs: 60_000, retryDelaysMs: [], sweepIntervalMs: 3_600_000 },
  });
});

afterAll(async () => {
  receiver?.release();
  await w?.close();
  await receiver?.close();
  await h?.close();
});

async function hookedProject(name: string, path: string): Promise<{ projectId: string; webhookId: string }> {
  const project = await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name } });
  expect(project.status, project.text).toBe(201);
  const hook = await h.api('POST', `/v1/projects/${project.body.id}/webhooks`, { token: h.adminToken, body: { url: `${receiver.base}${path}`, events: ['key.created'] } });
  expect(hook.status, hook.text).toBe(201);
  return { projectId: project.body.id, webhookId: hook.body.id };
}

async function createKeys(projectId: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const res = await h.api('POST', `/v1/projects/${projectId}/keys`, { token: h.adminToken, body: { name: `key ${i}` } });
    expect(res.status, res.text).toBe(201);
  }
}

async function statuses(projectId: string, webhookId: string): Promise<string[]> {
  const res = await h.api('GET', `/v1/projects/${projectId}/webhooks/${webhookId}/deliveries`, { token: h.adminToken });
  expect(res.status, res.text).toBe(200);
  return (res.body.data as { status: string }[]).map((d) => d.status);
}

describe('webhook delivery between projects', () => {
  it("delivers another project's events while one project's endpoint hangs, which holds only its share of attempts", async () => {
    receiver.hold('/hangs');
    const slow = await hookedProject('hangs', '/hangs');
    await createKeys(slow.projectId, 4);
    await eventually('the hanging endpoint holds a delivery', () => (receiver.at('/hangs').length > 0 ? true : undefined));

    const quick = await hookedProject('answers', '/answers');
    await createKeys(quick.projectId, 3);
    await eventually('every delivery of the other project arrived', async () => ((await statuses(quick.projectId, quick.webhookId)).every((s) => s === 'delivered') ? true : undefined));
    expect(receiver.at('/answers')).toHaveLength(3);

    // Meanwhile the hanging project had one attempt in flight, never more, and nothing settled.
    expect(receiver.at('/hangs')).toHaveLength(1);
    expect(await statuses(slow.projectId, slow.webhookId)).toEqual(['pending', 'pending', 'pending', 'pending']);

    // Once its endpoint answers, the hanging project's deliveries all go through, one at a time.
    receiver.release();
    await eventually('the hanging project caught up', async () => ((await statuses(slow.projectId, slow.webhookId)).every((s) => s === 'delivered') ? true : undefined));
    expect(receiver.at('/hangs')).toHaveLength(4);
  });
});
