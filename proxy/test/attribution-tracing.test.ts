import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectTestKey, type TestKey } from '../../test-support/redis.js';
import { SPAN_KIND, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../../test-support/otlp-receiver.js';
import { startHarness, type Harness } from './harness.js';

/** A request's SERVER span carries its tags (one `gateway.tag.<key>` each) and its end user. */
let receiver: OtlpReceiver;
let h: Harness;
let key: TestKey;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  h = await startHarness('attribution-tracing', 'providers:\n  - name: builtin\n    type: mock\n    models: [m]\n', {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_BSP_SCHEDULE_DELAY: '10',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  });
  key = await projectTestKey(h.redis, h.keys, { tags: { env: 'prod' } });
});

afterAll(async () => {
  await h?.stop();
  await receiver?.close();
});

async function serverSpan(requestId: string): Promise<ReceivedSpan> {
  const find = () => receiver.spans().find((s) => s.kind === SPAN_KIND.server && s.attributes['gateway.request.id'] === requestId) ?? null;
  await expect.poll(find, { timeout: 10_000 }).not.toBeNull();
  return find() as ReceivedSpan;
}

describe('tracing of tags and end users', () => {
  it('puts each tag and the end user on the request span', async () => {
    const res = await fetch(`${h.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key.key, 'x-gateway-tags': 'team=search,feature=rag' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], user: 'alice' }),
    });
    expect(res.status).toBe(200);
    const span = await serverSpan(res.headers.get('x-request-id') as string);
    expect(span.attributes).toMatchObject({ 'gateway.tag.team': 'search', 'gateway.tag.feature': 'rag', 'gateway.tag.env': 'prod', 'gateway.end_user': 'alice' });
  });

  it('adds no attribute for a request with neither', async () => {
    const plain = await projectTestKey(h.redis, h.keys);
    const res = await fetch(`${h.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': plain.key },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    const span = await serverSpan(res.headers.get('x-request-id') as string);
    expect(Object.keys(span.attributes).filter((name) => name.startsWith('gateway.tag.') || name === 'gateway.end_user')).toEqual([]);
  });
});
