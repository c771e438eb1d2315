import type { ServerResponse } from 'node:http';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectTestKey, type TestKey } from '../../test-support/redis.js';
import { sendJson, startWireMock, type RunningWireMock, type WireRequest } from '../../test-support/wire-mock.js';
import { startHarness, type Harness } from './harness.js';

/**
 * /v1/responses to a provider entry with `responses: native`: the official openai SDK's requests
 * go to `{base_url}/responses` as they came (built-in tools, `previous_response_id`,
 * `client_metadata` and fields the gateway does not know included, `openai-beta` with them), the
 * provider's Response object and events come back as it sent them, metered from its usage. A
 * route that may translate refuses what only the native path carries, before any provider call.
 */
let upstream: RunningWireMock;
let h: Harness;
let key: TestKey;
let client: OpenAI;

const response = (model: unknown, status = 'completed') => ({
  id: 'resp_native_1',
  object: 'response',
  created_at: 1,
  status,
  model,
  output: [{ id: 'msg_1', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'native answer', annotations: [] }] }],
  ...(status === 'incomplete' ? { incomplete_details: { reason: 'max_output_tokens' } } : {}),
  usage: { input_tokens: 40, output_tokens: 3, total_tokens: 43, input_tokens_details: { cached_tokens: 8 }, output_tokens_details: { reasoning_tokens: 0 } },
});

function answer(req: WireRequest, res: ServerResponse): void {
  if (req.path !== '/v1/responses') return sendJson(res, 404, { error: { message: `no ${req.path}`, type: 'invalid_request_error' } });
  if (req.body.stream !== true) return sendJson(res, 200, response(req.body.model, req.body.max_output_tokens === 1 ? 'incomplete' : 'completed'));
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const whole = response(req.body.model);
  const events = [
    { type: 'response.created', sequence_number: 0, response: { ...whole, status: 'in_progress', output: [], usage: null } },
    { type: 'response.output_text.delta', sequence_number: 1, item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'native answer' },
    { type: 'response.completed', sequence_number: 2, response: whole },
  ];
  for (const event of events) res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
  res.end();
}

beforeAll(async () => {
  upstream = await startWireMock(answer);
  h = await startHarness(
    'responses-native',
    `providers:
  - name: openai
    type: openai
    responses: native
    base_url: ${upstream.baseUrl}/v1
    api_key: sk-openai-provider-secret-0123456789
    models: [{ id: smart, upstream: gpt-up }, mixed]
  - name: compat
    type: openai
    base_url: ${upstream.baseUrl}/v1
    models: [mixed]
`,
  );
  key = await projectTestKey(h.redis, h.keys);
  client = new OpenAI({ apiKey: key.key, baseURL: `${h.url}/v1`, maxRetries: 0 });
});

afterAll(async () => {
  await h?.stop();
  await upstream?.close();
});

const stateful = {
  model: 'smart',
  input: 'What changed?',
  previous_response_id: 'resp_earlier',
  tools: [{ type: 'web_search' as const }],
  store: true,
  client_metadata: { session: 'abc' },
  a_field_from_tomorrow: { on: true },
};

describe('/v1/responses to a provider that serves it', () => {
  it('sends the body as it came, the model renamed and the openai-beta header with it, and returns the Response as sent', async () => {
    const got = await client.responses.create(stateful as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming, { headers: { 'openai-beta': 'responses=v9', 'openai-organization': 'org-client', 'x-request-id': 'native-resp-1' } });
    expect(got.id).toBe('resp_native_1');
    expect(got.output_text).toBe('native answer');
    const seen = upstream.lastRequest()!;
    expect(seen.path).toBe('/v1/responses');
    expect(seen.body).toEqual({ ...stateful, model: 'gpt-up' });
    expect(seen.headers['openai-beta']).toBe('responses=v9');
    // Account headers choose whose account the operator's key bills: never passed on.
    expect(seen.headers['openai-organization']).toBeUndefined();
    expect(seen.headers.authorization).toBe('Bearer sk-openai-provider-secret-0123456789');
    const { usage } = await h.records();
    expect(usage.find((u) => u.request_id === 'native-resp-1')).toMatchObject({ endpoint: 'responses', provider: 'openai', tokens: { input: 40, output: 3, cached: 8 }, finish_reason: 'stop' });
  });

  it('streams the provider\'s own events and meters them from response.completed', async () => {
    const stream = await client.responses.create({ ...stateful, stream: true } as unknown as OpenAI.Responses.ResponseCreateParamsStreaming, { headers: { 'x-request-id': 'native-resp-2' } });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types).toEqual(['response.created', 'response.output_text.delta', 'response.completed']);
    const { usage, audit } = await h.records();
    expect(usage.find((u) => u.request_id === 'native-resp-2')).toMatchObject({ stream: true, tokens: { input: 40, output: 3 } });
    expect(audit.filter((a) => a.request_id === 'native-resp-2')).toHaveLength(1);
  });

  it('records an incomplete response as cut at its output limit', async () => {
    await client.responses.create({ model: 'smart', input: 'hi', max_output_tokens: 1 }, { headers: { 'x-request-id': 'native-resp-3' } });
    const { usage } = await h.records();
    expect(usage.find((u) => u.request_id === 'native-resp-3')?.finish_reason).toBe('max_tokens');
  });

  it('refuses what only the native path carries on a route that may translate, calling no provider', async () => {
    const before = upstream.requests();
    for (let i = 0; i < 6; i++) {
      const err = await client.responses.create({ ...stateful, model: 'mixed' } as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming).then(
        () => null,
        (e: InstanceType<typeof OpenAI.APIError>) => e,
      );
      expect(err?.status).toBe(400);
    }
    expect(upstream.requests()).toBe(before);
  });
});
