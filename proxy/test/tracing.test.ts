import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectTestKey, type TestKey } from '../../test-support/redis.js';
import { SPAN_KIND, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../../test-support/otlp-receiver.js';
import type { RunningWireMock } from '../../test-support/wire-mock.js';
import { startAnthropicWireMock } from './wire-mocks/anthropic-wire-mock.js';
import { startAzureWireMock } from './wire-mocks/azure-wire-mock.js';
import { startGeminiWireMock } from './wire-mocks/gemini-wire-mock.js';
import { startOpenAiWireMock } from './wire-mocks/openai-wire-mock.js';
import { startHarness, type Harness } from './harness.js';

/**
 * OpenTelemetry traces of gateway requests, exported over OTLP/HTTP to a receiver in the test:
 * a SERVER span per request with the GenAI attributes, a CLIENT span per provider attempt, the
 * caller's trace continued and the provider's call carrying it on; content only when asked.
 */
let receiver: OtlpReceiver;
let first: RunningWireMock;
let second: RunningWireMock;
let anthropic: RunningWireMock;
let gemini: RunningWireMock;
let azure: RunningWireMock;
let traced: Harness;
let captured: Harness;
let proto: Harness;
const keys = new Map<Harness, TestKey>();

const providers = () => `providers:
  - name: first
    type: openai
    base_url: ${first.baseUrl}/v1
    api_key: sk-first-provider-secret
    models: [{ id: failing, upstream: conf-500 }]
  - name: second
    type: openai
    base_url: ${second.baseUrl}/v1
    api_key: sk-second-provider-secret
    models: [{ id: served, upstream: conf-text }, { id: failing, upstream: conf-text }, { id: embed, upstream: text-embedding-3-small }]
  - name: claude
    type: anthropic
    base_url: ${anthropic.baseUrl}
    api_key: sk-claude-provider-secret
    models: [{ id: via-anthropic, upstream: conf-text }]
  - name: google
    type: gemini
    base_url: ${gemini.baseUrl}
    api_key: google-provider-secret
    models: [{ id: via-gemini, upstream: conf-text }]
  - name: az
    type: azure
    base_url: ${azure.baseUrl}
    api_key: azure-provider-secret
    models: [{ id: via-azure, upstream: conf-text }]
`;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  first = await startOpenAiWireMock();
  second = await startOpenAiWireMock();
  anthropic = await startAnthropicWireMock();
  gemini = await startGeminiWireMock();
  azure = await startAzureWireMock();
  const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '10' };
  traced = await startHarness('tracing', providers(), { ...otel, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
  captured = await startHarness('tracing-capture', providers(), { ...otel, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_GATEWAY_CAPTURE_CONTENT: 'true', OTEL_SERVICE_NAME: 'edge-gateway' });
  // Protobuf (the default encoding), a collector credential, and only traces the caller sampled.
  proto = await startHarness('tracing-proto', providers(), {
    ...otel,
    OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-token=secret%20token',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0',
  });
  for (const h of [traced, captured, proto]) keys.set(h, await projectTestKey(h.redis, h.keys));
});

afterAll(async () => {
  for (const h of [traced, captured, proto]) await h?.stop();
  await first?.close();
  await second?.close();
  for (const mock of [anthropic, gemini, azure]) await mock?.close();
  await receiver?.close();
});

interface Sent {
  status: number;
  requestId: string;
  text: string;
}

async function chat(h: Harness, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Sent> {
  const res = await fetch(`${h.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': (keys.get(h) as TestKey).key, ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, requestId: res.headers.get('x-request-id') as string, text: await res.text() };
}

/** The request's SERVER span and its CLIENT children (attempts in order), once `attempts` of them arrived. */
async function traceOf(requestId: string, attempts: number): Promise<{ server: ReceivedSpan; clients: ReceivedSpan[] }> {
  const find = () => {
    const spans = receiver.spans();
    const server = spans.find((s) => s.kind === SPAN_KIND.server && s.attributes['gateway.request.id'] === requestId);
    if (server === undefined) return null;
    const clients = spans.filter((s) => s.kind === SPAN_KIND.client && s.parentSpanId === server.spanId);
    return clients.length === attempts ? { server, clients: clients.sort((a, b) => Number(a.attributes['gateway.attempt.number']) - Number(b.attributes['gateway.attempt.number'])) } : null;
  };
  await expect.poll(find, { timeout: 10_000 }).not.toBeNull();
  return find() as { server: ReceivedSpan; clients: ReceivedSpan[] };
}

const PROMPT = 'tell me about the lighthouse keeper';

describe('tracing', () => {
  it('records a SERVER span with the GenAI attributes and ids, and a CLIENT span for the provider call, never the key', async () => {
    const key = keys.get(traced) as TestKey;
    const sent = await chat(traced, { model: 'served', max_tokens: 50, temperature: 0.5, messages: [{ role: 'user', content: PROMPT }] });
    expect(sent.status).toBe(200);
    const { server, clients } = await traceOf(sent.requestId, 1);
    expect(server).toMatchObject({ name: 'chat served', service: 'gateway-proxy', status: 0 });
    expect(server.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'served',
      'gen_ai.response.model': 'conf-text',
      'gen_ai.response.id': 'chatcmpl-wire',
      'gen_ai.request.max_tokens': 50,
      'gen_ai.request.temperature': 0.5,
      'gen_ai.request.stream': false,
      'gen_ai.usage.input_tokens': 11,
      'gen_ai.usage.output_tokens': 2,
      'gen_ai.usage.cache_read.input_tokens': 3,
      'gen_ai.response.finish_reasons': ['stop'],
      'gateway.project.id': key.projectId,
      'gateway.key.id': key.id,
      'gateway.request.id': sent.requestId,
      'gateway.endpoint': 'chat.completions',
      'gateway.provider.name': 'second',
      'gateway.outcome': 'success',
      'gateway.attempts': 1,
      'http.request.method': 'POST',
      'http.route': '/v1/chat/completions',
      'http.response.status_code': 200,
    });
    expect(server.attributes['error.type']).toBeUndefined();
    const [attempt] = clients;
    expect(attempt).toMatchObject({ name: 'chat conf-text', traceId: server.traceId, status: 0 });
    expect(attempt?.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'conf-text',
      'gen_ai.response.model': 'conf-text',
      'gen_ai.usage.input_tokens': 11,
      'gen_ai.usage.output_tokens': 2,
      'gateway.provider.name': 'second',
      'gateway.attempt.number': 1,
      'gateway.attempt.outcome': 'served',
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(second.baseUrl).port),
    });
    // No secret in anything exported: neither the client's key nor a provider's.
    const exported = receiver.exports().map((e) => e.body.toString('utf8')).join('\n');
    expect(exported).not.toContain(key.key);
    expect(exported).not.toContain('provider-secret');
    // Content is not captured unless asked.
    expect(server.events).toEqual([]);
    expect(exported).not.toContain(PROMPT);
  });

  it('records one CLIENT span per attempt when the route fails over', async () => {
    const sent = await chat(traced, { model: 'failing', messages: [{ role: 'user', content: 'hi' }] });
    expect(sent.status).toBe(200);
    const { server, clients } = await traceOf(sent.requestId, 2);
    expect(server.attributes).toMatchObject({ 'gateway.attempts': 2, 'gateway.provider.name': 'second', 'http.response.status_code': 200 });
    expect(clients.map((c) => [c.attributes['gateway.provider.name'], c.attributes['gateway.attempt.outcome'], c.attributes['error.type'] ?? null, c.status])).toEqual([
      ['first', 'failover', 'UPSTREAM_ERROR', 2],
      ['second', 'served', null, 0],
    ]);
    expect(clients[0]?.attributes).toMatchObject({ 'gen_ai.request.model': 'conf-500', 'server.port': Number(new URL(first.baseUrl).port) });
  });

  it('continues the caller’s traceparent and passes each attempt’s context on to the provider', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parentId = '00f067aa0ba902b7';
    const sent = await chat(traced, { model: 'served', messages: [{ role: 'user', content: 'hi' }] }, { traceparent: `00-${traceId}-${parentId}-01`, tracestate: 'vendor=abc' });
    expect(sent.status).toBe(200);
    const { server, clients } = await traceOf(sent.requestId, 1);
    expect(server.traceId).toBe(traceId);
    expect(server.parentSpanId).toBe(parentId);
    const headers = second.lastRequest()?.headers ?? {};
    expect(headers.traceparent).toBe(`00-${traceId}-${clients[0]?.spanId}-01`);
    expect(headers.tracestate).toBe('vendor=abc');
  });

  it('sends the trace context from every adapter, and names each provider as the conventions do', async () => {
    for (const [model, mock, providerName] of [
      ['via-anthropic', () => anthropic, 'anthropic'],
      ['via-gemini', () => gemini, 'gcp.gemini'],
      ['via-azure', () => azure, 'azure.ai.openai'],
    ] as const) {
      const sent = await chat(traced, { model, messages: [{ role: 'user', content: 'hi' }] });
      expect(sent.status).toBe(200);
      const { server, clients } = await traceOf(sent.requestId, 1);
      expect(server.attributes['gen_ai.provider.name']).toBe(providerName);
      expect(clients[0]?.attributes['gen_ai.provider.name']).toBe(providerName);
      expect(mock().lastRequest()?.headers.traceparent).toBe(`00-${server.traceId}-${clients[0]?.spanId}-01`);
    }
  });

  it('traces an embeddings request like a chat one: its attempt span, and the attempt’s context sent to the provider', async () => {
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const res = await fetch(`${traced.url}/v1/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': (keys.get(traced) as TestKey).key, traceparent: `00-${traceId}-b7ad6b7169203331-01` },
      body: JSON.stringify({ model: 'embed', input: ['one', 'two'] }),
    });
    expect(res.status).toBe(200);
    const { server, clients } = await traceOf(res.headers.get('x-request-id') as string, 1);
    expect(server).toMatchObject({ name: 'embeddings embed', traceId });
    expect(server.attributes).toMatchObject({ 'gen_ai.operation.name': 'embeddings', 'gateway.endpoint': 'embeddings', 'gateway.attempts': 1, 'gateway.provider.name': 'second' });
    expect(clients[0]).toMatchObject({ name: 'embeddings text-embedding-3-small', traceId });
    expect(clients[0]?.attributes).toMatchObject({ 'gen_ai.request.model': 'text-embedding-3-small', 'gateway.attempt.outcome': 'served' });
    expect(second.lastRequest()?.path).toContain('/embeddings');
    expect(second.lastRequest()?.headers.traceparent).toBe(`00-${traceId}-${clients[0]?.spanId}-01`);
  });

  it('gives a refused request its error type, and other endpoints their route as name', async () => {
    const sent = await chat(traced, { model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] });
    expect(sent.status).toBe(404);
    const { server } = await traceOf(sent.requestId, 0);
    expect(server).toMatchObject({ name: 'chat no-such-model', status: 0 });
    expect(server.attributes).toMatchObject({ 'error.type': 'MODEL_NOT_FOUND', 'http.response.status_code': 404, 'gateway.outcome': 'error', 'gateway.attempts': 0 });

    const res = await fetch(`${traced.url}/v1/models`, { headers: { 'x-api-key': (keys.get(traced) as TestKey).key } });
    expect(res.status).toBe(200);
    const models = await traceOf(res.headers.get('x-request-id') as string, 0);
    expect(models.server.name).toBe('GET /v1/models');
    expect(models.server.attributes['gen_ai.operation.name']).toBeUndefined();
  });

  it('records the prompt and the completion as an event when content capture is on', async () => {
    const res = await fetch(`${captured.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': (keys.get(captured) as TestKey).key },
      body: JSON.stringify({ model: 'served', stream: true, messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: PROMPT }] }),
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('[DONE]');
    const { server, clients } = await traceOf(res.headers.get('x-request-id') as string, 1);
    expect(server.service).toBe('edge-gateway');
    expect(server.attributes).toMatchObject({ 'gen_ai.request.stream': true, 'gen_ai.response.model': 'conf-text', 'gen_ai.usage.output_tokens': 2 });
    expect(clients[0]?.attributes['gateway.attempt.outcome']).toBe('served');
    expect(server.events.map((e) => e.name)).toEqual(['gen_ai.client.inference.operation.details']);
    const event = server.events[0]?.attributes ?? {};
    expect(JSON.parse(String(event['gen_ai.input.messages']))).toEqual([
      { role: 'system', parts: [{ type: 'text', content: 'be brief' }] },
      { role: 'user', parts: [{ type: 'text', content: PROMPT }] },
    ]);
    expect(JSON.parse(String(event['gen_ai.output.messages']))).toEqual([{ role: 'assistant', parts: [{ type: 'text', content: 'Hello there' }], finish_reason: 'stop' }]);
  });

  it('exports protobuf with the configured headers, and follows the sampler: a sampled caller is traced, an unsampled root is not', async () => {
    const traceId = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
    const sampled = await chat(proto, { model: 'served', messages: [{ role: 'user', content: 'hi' }] }, { traceparent: `00-${traceId}-1111111111111111-01` });
    expect(sampled.status).toBe(200);
    await expect.poll(() => receiver.exports().filter((e) => e.body.includes(sampled.requestId)).length, { timeout: 10_000 }).toBeGreaterThan(0);
    const exported = receiver.exports().find((e) => e.body.includes(sampled.requestId));
    expect(exported?.contentType).toBe('application/x-protobuf');
    expect(exported?.path).toBe('/v1/traces');
    expect(exported?.headers['x-collector-token']).toBe('secret token');
    expect(exported?.body.includes(Buffer.from('chat served'))).toBe(true);
    expect(exported?.body.includes(Buffer.from(traceId, 'hex'))).toBe(true);

    // Ratio 0 at the root: not recorded, yet the provider still learns the (unsampled) trace.
    const root = await chat(proto, { model: 'served', messages: [{ role: 'user', content: 'hi' }] });
    expect(root.status).toBe(200);
    expect(second.lastRequest()?.headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    await proto.proxy.drain();
    expect(receiver.exports().some((e) => e.body.includes(root.requestId))).toBe(false);
  });
});
