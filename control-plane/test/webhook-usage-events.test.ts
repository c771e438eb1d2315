import { randomUUID } from 'node:crypto';
import { Queue, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompactRowsWriter, encodeCompactRecordBatch, encodeRecordBatch, newRecordId, RECORD_JOB_NAME, RECORD_JOB_OPTIONS, RedisKeys, type AuditEvent, type AuditOutcome, type UsageRecord } from '@gateway/shared';
import { TEST_REDIS_URL } from '../../test-support/databases.js';
import { startHarness, type Harness } from './harness.js';
import { eventually, signatureValid, startReceiver, startWebhookWriter, webhookJobs, type Receiver, type TestWriter } from './webhook-fixtures.js';

/**
 * The events the writer sets off as records land, with records pushed into the records queue as
 * a proxy pushes them: quota.threshold (80 and 100 %, once per period and quota, with several
 * writers at once) and gateway.request.failed (one event per project and window).
 */
let h: Harness;
let receiver: Receiver;
const writers: TestWriter[] = [];
let records: Queue;
let connection: Redis;

const WINDOW_MS = 3_600_000;

beforeAll(async () => {
  h = await startHarness('webhookusage', { env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  receiver = await startReceiver();
  const options = { webhooks: { failedRequestsWindowMs: WINDOW_MS, sweepIntervalMs: 3_600_000, retryDelaysMs: [50] } };
  writers.push(await startWebhookWriter(h, { WEBHOOK_ALLOW_PRIVATE: 'true' }, options));
  writers.push(await startWebhookWriter(h, { WEBHOOK_ALLOW_PRIVATE: 'true' }, options));
  const keys = new RedisKeys(h.prefix);
  connection = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  records = new Queue(keys.recordsQueue, { connection, prefix: keys.bullPrefix });
});

afterAll(async () => {
  for (const w of writers) await w.close();
  await records?.close();
  connection?.disconnect();
  await receiver?.close();
  await h?.close();
});

/** Names are unique per account: each project of this file gets its own. */
let projects = 0;
async function createProject(body: object): Promise<string> {
  const res = await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: `usage ${++projects}`, ...body } });
  expect(res.status).toBe(201);
  return res.body.id;
}

async function createWebhook(projectId: string, path: string, events: string[]): Promise<{ id: string; secret: string }> {
  const res = await h.api('POST', `/v1/projects/${projectId}/webhooks`, { token: h.adminToken, body: { url: `${receiver.base}${path}`, events } });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

function usage(projectId: string, tokens: number, timestamp = Date.now()): UsageRecord {
  return {
    id: newRecordId(),
    request_id: `req-${randomUUID()}`,
    project_id: projectId,
    key_id: randomUUID(),
    timestamp,
    model: 'gpt-4o-mini',
    provider: 'mock',
    tokens: { input: tokens - 1, output: 1, total: tokens, cached: 0 },
    cost_usd: null,
    latency_ms: 5,
    finish_reason: 'stop',
    provider_finish_reason: null,
    stream: false,
    endpoint: 'chat.completions',
  };
}

function audit(projectId: string, outcome: AuditOutcome, status: number, errorCode: string | null): AuditEvent {
  return {
    id: newRecordId(),
    request_id: `req-${randomUUID()}`,
    timestamp: Date.now(),
    type: 'gateway.request',
    outcome,
    status,
    error_code: errorCode,
    project_id: projectId,
    key_id: randomUUID(),
    actor: null,
    model: 'gpt-4o-mini',
    provider: outcome === 'error' ? 'flaky' : null,
    client_ip: '127.0.0.1',
    user_agent: 'test',
    latency_ms: 7,
    endpoint: 'chat.completions',
    attempts: 1,
    providers: ['flaky'],
  };
}

/** Pushes one batch as a proxy does and resolves once a writer has written it. */
async function land(usageRecords: UsageRecord[], auditEvents: AuditEvent[] = []): Promise<void> {
  const job = await records.add(RECORD_JOB_NAME, encodeRecordBatch(usageRecords, auditEvents), { ...RECORD_JOB_OPTIONS, jobId: randomUUID() });
  await gone(job);
}

async function gone(job: Job): Promise<void> {
  await eventually(`record batch ${job.id} written`, async () => {
    const state = await job.getState();
    if (state === 'failed') throw new Error(`job ${job.id} failed: ${job.failedReason}`);
    return state === 'unknown' ? true : undefined;
  });
}

interface Delivery {
  event_id: string;
  event_type: string;
  status: string;
}

async function settled(projectId: string, webhookId: string, count: number): Promise<Delivery[]> {
  return eventually(`${count} settled deliveries`, async () => {
    const res = await h.api('GET', `/v1/projects/${projectId}/webhooks/${webhookId}/deliveries`, { token: h.adminToken });
    const data = res.body.data as Delivery[];
    return data.length === count && data.every((d) => d.status === 'delivered') ? data : undefined;
  });
}

const bodies = (path: string) => receiver.at(path).map((r) => JSON.parse(r.body));
/** quota.threshold payloads in the order of their thresholds and quotas (deliveries run side by side). */
const thresholds = (path: string) =>
  bodies(path)
    .map((e) => e.data)
    .sort((a, b) => a.quota_tokens - b.quota_tokens || a.threshold - b.threshold);

describe('quota.threshold', () => {
  it('announces 80 % and 100 % of a total quota once each, however the usage lands', async () => {
    const projectId = await createProject({ quota_tokens: 1000 });
    const hook = await createWebhook(projectId, '/quota-total', ['quota.threshold']);
    await land([usage(projectId, 700)]);
    const crossing = [usage(projectId, 100), usage(projectId, 50)];
    await land(crossing);
    // The same batch again (a retry after a lost acknowledgement): nothing is counted twice.
    const replay = await records.add(RECORD_JOB_NAME, encodeRecordBatch(crossing, []), { ...RECORD_JOB_OPTIONS, jobId: randomUUID() });
    await gone(replay);
    await land([usage(projectId, 100)]);
    await land([usage(projectId, 100)]);
    await land([usage(projectId, 100)]);
    const log = await settled(projectId, hook.id, 2);
    expect(log.map((d) => d.event_type)).toEqual(['quota.threshold', 'quota.threshold']);
    expect(thresholds('/quota-total')).toEqual([
      { project_id: projectId, threshold: 80, quota_period: 'total', period: 'total', quota_tokens: 1000, used_tokens: 850 },
      { project_id: projectId, threshold: 100, quota_period: 'total', period: 'total', quota_tokens: 1000, used_tokens: 1050 },
    ]);
    for (const request of receiver.at('/quota-total')) expect(signatureValid(hook.secret, request)).toBe(true);
    const [row] = await h.sql<{ used_tokens: string }[]>`select used_tokens::text from projects where id = ${projectId}`;
    expect(row?.used_tokens).toBe('1150');

    // A raised quota arms the thresholds again; a quota set back to a value already announced does not.
    expect((await h.api('PATCH', `/v1/projects/${projectId}`, { token: h.adminToken, body: { quota_tokens: 1400 } })).status).toBe(200);
    await land([usage(projectId, 10)]);
    await settled(projectId, hook.id, 3);
    expect(thresholds('/quota-total')[2]).toMatchObject({ threshold: 80, quota_tokens: 1400, used_tokens: 1160 });
    expect((await h.api('PATCH', `/v1/projects/${projectId}`, { token: h.adminToken, body: { quota_tokens: 1000 } })).status).toBe(200);
    await land([usage(projectId, 10)]);
    const [count] = await h.sql<{ n: number }[]>`select count(*)::int as n from quota_thresholds where project_id = ${projectId}`;
    expect(count?.n).toBe(3);
  });

  it('counts a monthly quota in this month only: late records of a past month announce nothing', async () => {
    const projectId = await createProject({ quota_tokens: 1000, quota_period: 'month' });
    const hook = await createWebhook(projectId, '/quota-month', ['quota.threshold']);
    const now = new Date();
    const lastMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 15);
    await land([usage(projectId, 900, lastMonth)]);
    await land([usage(projectId, 500)]);
    // One batch that passes both thresholds announces both.
    await land([usage(projectId, 600)]);
    await settled(projectId, hook.id, 2);
    const period = `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
    expect(thresholds('/quota-month')).toEqual([
      { project_id: projectId, threshold: 80, quota_period: 'month', period, quota_tokens: 1000, used_tokens: 1100 },
      { project_id: projectId, threshold: 100, quota_period: 'month', period, quota_tokens: 1000, used_tokens: 1100 },
    ]);
  });

  it('announces each threshold once while two writers write many batches at the same time', async () => {
    const projectId = await createProject({ quota_tokens: 10_000 });
    const hook = await createWebhook(projectId, '/quota-busy', ['quota.threshold']);
    const jobs = await Promise.all(
      Array.from({ length: 40 }, () => records.add(RECORD_JOB_NAME, encodeRecordBatch([usage(projectId, 150), usage(projectId, 150)], []), { ...RECORD_JOB_OPTIONS, jobId: randomUUID() })),
    );
    for (const job of jobs) await gone(job);
    await settled(projectId, hook.id, 2);
    const events = thresholds('/quota-busy');
    expect(events.map((e) => e.threshold)).toEqual([80, 100]);
    expect(events.every((e) => e.used_tokens >= e.threshold * 100)).toBe(true);
  });
});

describe('gateway.request.failed', () => {
  it('gathers the failed requests of a window into one event per project, each reported once', async () => {
    const projectId = await createProject({});
    const quiet = await createProject({});
    const hook = await createWebhook(projectId, '/failures', ['gateway.request.failed']);
    await createWebhook(quiet, '/quiet', ['key.created']);
    const failed = [audit(projectId, 'error', 502, 'UPSTREAM_ERROR'), audit(projectId, 'error', 504, 'UPSTREAM_TIMEOUT'), audit(projectId, 'error', 502, 'UPSTREAM_ERROR')];
    const started = Date.now();
    await land([], [failed[0]!, failed[1]!, audit(projectId, 'success', 200, null), audit(quiet, 'error', 502, 'UPSTREAM_ERROR')]);
    await land([], [failed[2]!, audit(projectId, 'auth_failed', 401, 'UNAUTHORIZED')]);
    // The replayed first batch adds nothing.
    await land([], [failed[0]!]);
    const ended = Date.now();

    const waiting = await h.sql<{ project_id: string; n: number }[]>`select project_id, count(*)::int as n from webhook_failed_requests group by project_id`;
    expect(waiting).toEqual([{ project_id: projectId, n: 3 }]);
    // One job per window the batches landed in (one, unless an hour boundary passed meanwhile).
    const windows = Math.floor(ended / WINDOW_MS) - Math.floor(started / WINDOW_MS) + 1;
    const queue = webhookJobs(h);
    try {
      const delayed = (await queue.queue.getDelayed()).filter((j) => j.name === 'failed-requests');
      expect(delayed.map((j) => j.data)).toEqual(Array.from({ length: windows }, () => ({ project_id: projectId })));
      // The window's end, brought forward.
      for (const job of delayed) await job.promote();
    } finally {
      await queue.close();
    }
    await settled(projectId, hook.id, windows);
    const events = bodies('/failures');
    expect(events.map((e) => e.type)).toEqual(Array.from({ length: windows }, () => 'gateway.request.failed'));
    const reported = events.flatMap((e) => e.data.requests as { request_id: string }[]);
    expect(reported.map((r) => r.request_id).sort()).toEqual(failed.map((f) => f.request_id).sort());
    expect(events.reduce((n, e) => n + e.data.count, 0)).toBe(3);
    expect(events[0].data).toMatchObject({ project_id: projectId, omitted: 0 });
    expect(reported.find((r) => r.request_id === failed[1]!.request_id)).toEqual({
      request_id: failed[1]!.request_id,
      timestamp: failed[1]!.timestamp,
      status: 504,
      error_code: 'UPSTREAM_TIMEOUT',
      model: 'gpt-4o-mini',
      provider: 'flaky',
      key_id: failed[1]!.key_id,
      endpoint: 'chat.completions',
    });
    expect(signatureValid(hook.secret, receiver.at('/failures')[0]!)).toBe(true);
    expect(await h.sql`select 1 from webhook_failed_requests`).toHaveLength(0);
    expect(receiver.at('/quiet')).toEqual([]);
  });
});

describe('guardrail.blocked', () => {
  it('reports the requests a guardrail blocked, input and output, apart from failed requests', async () => {
    const projectId = await createProject({});
    const hook = await createWebhook(projectId, '/blocked', ['guardrail.blocked']);
    const refused = { ...audit(projectId, 'policy_blocked', 400, 'GUARDRAIL_BLOCKED'), guardrails: [{ id: 'no-secrets', stage: 'input' as const, action: 'block' as const }] };
    const withheld = { ...audit(projectId, 'success', 200, null), guardrails: [{ id: 'pii', stage: 'input' as const, action: 'mask' as const }, { id: 'codenames', stage: 'output' as const, action: 'block' as const }] };
    const flagged = { ...audit(projectId, 'success', 200, null), guardrails: [{ id: 'pii', stage: 'input' as const, action: 'flag' as const }] };
    const segment = new CompactRowsWriter();
    for (const event of [refused, withheld, flagged, audit(projectId, 'error', 502, 'UPSTREAM_ERROR')]) segment.add(event, null);
    const job = await records.add(RECORD_JOB_NAME, encodeCompactRecordBatch([segment]), { ...RECORD_JOB_OPTIONS, jobId: randomUUID() });
    await gone(job);
    const waiting = await h.sql<{ request_id: string; kind: string; guardrails: string[] }[]>`select request_id, kind, guardrails from webhook_failed_requests where project_id = ${projectId} order by ts, request_id`;
    expect(waiting.map((w) => [w.request_id, w.kind, w.guardrails]).sort()).toEqual(
      [
        [refused.request_id, 'guardrail', ['no-secrets']],
        [withheld.request_id, 'guardrail', ['codenames']],
      ].sort(),
    );
    const queue = webhookJobs(h);
    try {
      for (const delayed of (await queue.queue.getDelayed()).filter((j) => j.name === 'failed-requests' && j.data.project_id === projectId)) await delayed.promote();
    } finally {
      await queue.close();
    }
    await settled(projectId, hook.id, 1);
    const events = bodies('/blocked');
    expect(events.map((e) => e.type)).toEqual(['guardrail.blocked']);
    expect(events[0].data).toMatchObject({ project_id: projectId, count: 2, omitted: 0 });
    const reported = events[0].data.requests as { request_id: string; guardrails: string[]; error_code: string | null }[];
    expect(reported.find((r) => r.request_id === refused.request_id)).toMatchObject({ guardrails: ['no-secrets'], error_code: 'GUARDRAIL_BLOCKED', status: 400 });
    expect(reported.find((r) => r.request_id === withheld.request_id)).toMatchObject({ guardrails: ['codenames'], status: 200 });
    expect(signatureValid(hook.secret, receiver.at('/blocked')[0]!)).toBe(true);
  });
});
