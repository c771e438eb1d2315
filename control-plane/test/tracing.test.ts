import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeRecordBatch, RedisKeys, type AuditEvent, type UsageRecord } from '@gateway/shared';
import { TEST_REDIS_URL } from '../../test-support/databases.js';
import { SPAN_KIND, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../../test-support/otlp-receiver.js';
import type { Db } from '../src/db/connect.js';
import { RECORD_BACKOFF_TYPE } from '../src/writer/record-worker.js';
import type { Writer } from '../src/writer/start-writer.js';
import { ADMIN_PASSWORD, startHarness, type Harness } from './harness.js';
import { createFixture, recordsQueue, requestRecords, startTestWriter, type Fixture } from './pipeline/pipeline-fixtures.js';

/**
 * Traces of the control plane (a SERVER span per management request, continuing the caller's
 * traceparent, with route, status and user id) and of the writer (a span per record batch, with
 * its counts), exported over OTLP/HTTP JSON to a receiver in the test.
 */
let receiver: OtlpReceiver;
let h: Harness;
let writer: Writer;
let jobs: ReturnType<typeof recordsQueue>;
let fixture: Fixture;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '10' };
  h = await startHarness('tracing', { env: otel });
  fixture = await createFixture(h.sql as unknown as Db, 1, 1);
  writer = await startTestWriter({ ...otel, DATABASE_URL: h.db.url, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: h.prefix });
  jobs = recordsQueue(TEST_REDIS_URL, new RedisKeys(h.prefix));
});

afterAll(async () => {
  await writer?.close();
  await jobs?.close();
  await h?.close();
  await receiver?.close();
});

async function spanWhere(match: (s: ReceivedSpan) => boolean): Promise<ReceivedSpan> {
  await expect.poll(() => receiver.spans().find(match), { timeout: 10_000 }).toBeDefined();
  return receiver.spans().find(match) as ReceivedSpan;
}

const byRequestId = (id: string | null) => (s: ReceivedSpan) => s.attributes['gateway.request.id'] === id;

describe('control plane tracing', () => {
  it('records a SERVER span per management request, continuing the caller’s trace, with the user id', async () => {
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const parentId = 'b7ad6b7169203331';
    const res = await h.api('GET', '/v1/projects', { token: h.adminToken, headers: { traceparent: `00-${traceId}-${parentId}-01` } });
    expect(res.status).toBe(200);
    const span = await spanWhere(byRequestId(res.headers.get('x-request-id')));
    expect(span).toMatchObject({ name: 'GET /v1/projects', kind: SPAN_KIND.server, service: 'gateway-control-plane', traceId, parentSpanId: parentId, status: 0 });
    expect(span.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.route': '/v1/projects',
      'url.path': '/v1/projects',
      'http.response.status_code': 200,
      'enduser.id': h.adminId,
    });
  });

  it('names a span by its route template, and leaves the user out when nobody signed in', async () => {
    const missing = await h.api('GET', `/v1/projects/${randomUUID()}`, { token: h.adminToken });
    expect(missing.status).toBe(404);
    const span = await spanWhere(byRequestId(missing.headers.get('x-request-id')));
    expect(span).toMatchObject({ name: 'GET /v1/projects/:id', status: 0 });
    expect(span.attributes['http.response.status_code']).toBe(404);

    const anonymous = await h.api('GET', '/v1/projects');
    expect(anonymous.status).toBe(401);
    const refused = await spanWhere(byRequestId(anonymous.headers.get('x-request-id')));
    expect(refused.attributes['http.response.status_code']).toBe(401);
    expect(refused.attributes['enduser.id']).toBeUndefined();
    // A new trace: no traceparent was sent.
    expect(refused.parentSpanId).toBe('');

    // Neither a password nor a token is in anything exported.
    await h.signin('admin@example.test', ADMIN_PASSWORD);
    const exported = receiver.exports().map((e) => e.body.toString('utf8')).join('\n');
    expect(exported).not.toContain(ADMIN_PASSWORD);
    expect(exported).not.toContain(h.adminToken);
  });

  it('records a span per writer batch with its records and rows written', async () => {
    const usage: UsageRecord[] = [];
    const audit: AuditEvent[] = [];
    for (let i = 0; i < 3; i++) {
      const r = requestRecords(fixture);
      usage.push(r.usage);
      audit.push(r.audit);
    }
    const jobId = randomUUID();
    await jobs.queue.add('batch', encodeRecordBatch(usage, audit), { jobId, attempts: 2 ** 31 - 1, backoff: { type: RECORD_BACKOFF_TYPE, delay: 1_000 }, removeOnComplete: true });
    const span = await spanWhere((s) => s.attributes['gateway.writer.job.id'] === jobId);
    expect(span).toMatchObject({ name: 'process record batch', service: 'gateway-writer', status: 0 });
    expect(span.attributes).toMatchObject({
      'gateway.writer.records': 6,
      'gateway.writer.rows_written': 6,
      'gateway.writer.rows_replayed': 0,
      'gateway.writer.records_invalid': 0,
      'gateway.writer.attempt': 1,
    });
  });
});
