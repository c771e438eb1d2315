import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeProjectPolicy, NO_RATE_LIMITS } from '@gateway/shared';
import { projectTestKey, type TestKey } from '../../test-support/redis.js';
import type { RunningWireMock } from '../../test-support/wire-mock.js';
import { startAzureWireMock } from './wire-mocks/azure-wire-mock.js';
import { startHarness, type Harness } from './harness.js';

/** The official SDK, unmodified, against the proxy in front of a wire-faithful Azure OpenAI mock. */
let azure: RunningWireMock;
let h: Harness;
let key: TestKey;
let capped: TestKey;
let client: OpenAI;

const PROVIDER_SECRET = 'azure-provider-secret-0123456789';

beforeAll(async () => {
  azure = await startAzureWireMock();
  h = await startHarness(
    'azure-sdk',
    `providers:
  - name: azure-east
    type: azure
    base_url: ${azure.baseUrl}
    api_key: ${PROVIDER_SECRET}
    models:
      - { id: gpt-4o-mini, upstream: conf-text }
      - { id: weather, upstream: conf-tools }
      - { id: broken, upstream: conf-500 }
      - { id: busy, upstream: conf-429 }
      - { id: guarded, upstream: azure-filtered-prompt }
      - { id: thinker, upstream: o4-mini }
`,
  );
  key = await projectTestKey(h.redis, h.keys);
  capped = await projectTestKey(h.redis, h.keys);
  await h.redis.set(
    h.keys.projectPolicy(capped.projectId),
    encodeProjectPolicy({ id: capped.projectId, quota_tokens: null, quota_period: 'total', rate_limits: NO_RATE_LIMITS, allowed_models: null, max_tokens_cap: 64 }),
  );
  client = new OpenAI({ apiKey: key.key, baseURL: `${h.url}/v1`, maxRetries: 0 });
});

afterAll(async () => {
  await h?.stop();
  await azure?.close();
});

const weatherTool = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};

const sentBody = () => azure.lastRequest()?.body as Record<string, unknown>;

async function apiError(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpenAI.APIError);
  return err as InstanceType<typeof OpenAI.APIError>;
}

describe('official openai SDK through the gateway to Azure OpenAI', () => {
  it("completes a non-streaming request, Azure's filter verdicts included", async () => {
    const res = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi there' }] });
    expect(res.choices[0]?.message.content).toBe('Hello there');
    expect(res.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 2, total_tokens: 13 });
    expect((res as unknown as { prompt_filter_results: unknown }).prompt_filter_results).toMatchObject([{ prompt_index: 0 }]);
    expect(azure.lastRequest()?.path).toBe('/openai/deployments/conf-text/chat/completions?api-version=2024-10-21');
  });

  it('streams, and hides the usage chunk it did not ask for', async () => {
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Stream please' }], stream: true });
    let text = '';
    let chunks = 0;
    let sawUsage = false;
    let finish: string | null = null;
    for await (const chunk of stream) {
      chunks++;
      // Azure's opening chunk without choices is not passed on as such.
      expect(chunk.choices.length).toBeGreaterThan(0);
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) sawUsage = true;
    }
    expect(chunks).toBeGreaterThan(1);
    expect(text).toBe('Hello there');
    expect(finish).toBe('stop');
    expect(sawUsage).toBe(false);
    expect(sentBody().stream_options).toEqual({ include_usage: true });
  });

  it('streams with the usage chunk when the client asks for it', async () => {
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Count me' }], stream: true, stream_options: { include_usage: true } });
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
    expect(usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 2, total_tokens: 13 });
  });

  it('returns tool calls, whole and as streamed deltas', async () => {
    const whole = await client.chat.completions.create({ model: 'weather', messages: [{ role: 'user', content: 'Weather?' }], tools: [weatherTool] });
    expect(whole.choices[0]?.finish_reason).toBe('tool_calls');
    expect(whole.choices[0]?.message.tool_calls?.[0]).toMatchObject({ type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } });

    const runner = client.chat.completions.stream({ model: 'weather', messages: [{ role: 'user', content: 'Weather?' }], tools: [weatherTool] });
    const final = await runner.finalChatCompletion();
    const call = final.choices[0]?.message.tool_calls?.[0];
    expect(call && 'function' in call ? call.function : null).toMatchObject({ name: 'get_weather', arguments: '{"city":"Paris"}' });
    expect(final.choices[0]?.finish_reason).toBe('tool_calls');
  });

  it("surfaces Azure's errors with the gateway's status and code", async () => {
    const broken = await apiError(client.chat.completions.create({ model: 'broken', messages: [{ role: 'user', content: 'x' }] }));
    expect(broken.status).toBe(502);
    expect(broken.code).toBe('UPSTREAM_ERROR');

    const busy = await apiError(client.chat.completions.create({ model: 'busy', messages: [{ role: 'user', content: 'x' }] }));
    expect(busy.status).toBe(429);
    expect(busy.code).toBe('RATE_LIMITED');
    expect(busy.headers?.get('retry-after')).toBe('7');

    const guarded = await apiError(client.chat.completions.create({ model: 'guarded', messages: [{ role: 'user', content: 'x' }] }));
    expect(guarded.status).toBe(400);
    expect(guarded.code).toBe('INVALID_REQUEST');
    expect(guarded.param).toBe('messages');
    expect(guarded.message).toContain('content management policy');
  });

  it("sends a reasoning deployment max_completion_tokens, the client's limit or the project's cap", async () => {
    await client.chat.completions.create({ model: 'thinker', messages: [{ role: 'user', content: 'Think' }], max_tokens: 100 });
    expect(sentBody().max_completion_tokens).toBe(100);
    expect('max_tokens' in sentBody()).toBe(false);

    const cappedClient = new OpenAI({ apiKey: capped.key, baseURL: `${h.url}/v1`, maxRetries: 0 });
    const stream = await cappedClient.chat.completions.create({ model: 'thinker', messages: [{ role: 'user', content: 'Think' }], stream: true });
    for await (const _ of stream);
    expect(sentBody().max_completion_tokens).toBe(64);
    expect('max_tokens' in sentBody()).toBe(false);
  });

  it('sends Azure its own key in api-key, never the client key, and records the usage', async () => {
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] });
    const headers = azure.lastRequest()?.headers ?? {};
    expect(headers['api-key']).toBe(PROVIDER_SECRET);
    expect(headers.authorization).toBeUndefined();
    expect(JSON.stringify(headers)).not.toContain(key.key);

    const { usage, raw } = await h.records();
    const served = usage.filter((u) => u.finish_reason !== 'error');
    expect(served.length).toBeGreaterThan(0);
    for (const u of served) {
      expect(u.provider).toBe('azure-east');
      expect(u.tokens).toMatchObject({ input: 11, output: 2, total: 13 });
    }
    expect(usage.filter((u) => u.stream).length).toBeGreaterThanOrEqual(2);
    expect(raw.join('')).not.toContain(PROVIDER_SECRET);
  });
});
