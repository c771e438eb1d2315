import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectTestKey, type TestKey } from '../../test-support/redis.js';
import { SPAN_KIND, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../../test-support/otlp-receiver.js';
import type { RunningWireMock } from '../../test-support/wire-mock.js';
import { EXTRA, startAnthropicWireMock } from './wire-mocks/anthropic-wire-mock.js';
import { startHarness, type Harness } from './harness.js';

/**
 * A request's SERVER span carries its tags (one `gateway.tag.<key>` each), its end user, and the
 * prompt tokens the provider read from and wrote to its cache.
 */
let receiver: OtlpReceiver;
let anthropic: RunningWireMock;
let h: Harness;
let key: TestKey;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  anthropic = await startAnthropicWireMock();
  const providers = `providers:
  - name: builtin
    type: mock
    models: [m]
  - name: claude
    type: anthropic
    base_url: ${anthropic.baseUrl}
    models: [{ id: cached, upstream: ${EXTRA.thinking} }]
`;
  h = await startHarness('attribution-tracing', providers, {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_BSP_SCHEDULE_DELAY: '10',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  });
  key = await projectTestKey(h.redis, h.keys, { tags: { env: 'prod' } });
});

afterAll(async () => {
  await h?.stop();
  await anthropic?.close();
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

  it('counts the prompt tokens read from and written to the provider cache', async () => {
    const res = await fetch(`${h.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key.key },
      body: JSON.stringify({ model: 'cached', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    const span = await serverSpan(res.headers.get('x-request-id') as string);
    expect(span.attributes).toMatchObject({ 'gen_ai.usage.input_tokens': 11, 'gen_ai.usage.cache_read.input_tokens': 2, 'gen_ai.usage.cache_creation.input_tokens': 4 });
  });
});
