import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROVIDER_KEY, SCENARIOS } from '../src/providers/conformance.case.js';
import { EXTRA, startAnthropicWireMock } from './wire-mocks/anthropic-wire-mock.js';
import type { RunningWireMock } from '../../test-support/wire-mock.js';
import { projectTestKey, type TestKey } from '../../test-support/redis.js';
import { startHarness, type Harness } from './harness.js';

/**
 * The official openai SDK, unmodified, against the proxy whose providers file routes its models
 * to a provider of type anthropic, in front of a mock speaking Anthropic's Messages wire format.
 */
let upstream: RunningWireMock;
let h: Harness;
let key: TestKey;
let client: OpenAI;

beforeAll(async () => {
  upstream = await startAnthropicWireMock();
  h = await startHarness(
    'anthropic-sdk',
    `providers:
  - name: claude
    type: anthropic
    base_url: ${upstream.baseUrl}
    api_key: ${PROVIDER_KEY}
    models:
      - { id: claude-text, upstream: ${SCENARIOS.text} }
      - { id: claude-tools, upstream: ${SCENARIOS.tools} }
      - { id: claude-400, upstream: ${SCENARIOS.status400} }
      - { id: claude-429, upstream: ${SCENARIOS.status429} }
      - { id: claude-bad-key, upstream: ${EXTRA.unauthorized} }
`,
  );
  key = await projectTestKey(h.redis, h.keys);
  client = new OpenAI({ apiKey: key.key, baseURL: `${h.url}/v1`, maxRetries: 0 });
});

afterAll(async () => {
  await h?.stop();
  await upstream?.close();
});

const weatherTool = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};

async function apiError(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(OpenAI.APIError);
    return err as InstanceType<typeof OpenAI.APIError>;
  }
  throw new Error('expected the request to fail');
}

describe('official openai SDK through the gateway to an Anthropic provider', () => {
  it('completes a non-streaming request, with the whole prompt and its cached part counted', async () => {
    const res = await client.chat.completions.create({ model: 'claude-text', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi there' }] });
    expect(res.object).toBe('chat.completion');
    expect(res.id).toBe('chatcmpl-msg_01wire');
    expect(res.choices[0]?.message).toMatchObject({ role: 'assistant', content: 'Hello there' });
    expect(res.choices[0]?.finish_reason).toBe('stop');
    expect(res.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 2, total_tokens: 13, prompt_tokens_details: { cached_tokens: 3 } });
    const sent = upstream.lastRequest();
    expect(sent?.path).toBe('/v1/messages');
    expect(sent?.headers['x-api-key']).toBe(PROVIDER_KEY);
    expect(JSON.stringify(sent?.headers)).not.toContain(key.key);
    expect(sent?.body).toMatchObject({ model: SCENARIOS.text, system: 'Be brief.', max_tokens: 4096, messages: [{ role: 'user', content: 'Hi there' }] });
  });

  it('streams, without the usage chunk it did not ask for', async () => {
    const stream = await client.chat.completions.create({ model: 'claude-text', messages: [{ role: 'user', content: 'Stream please' }], stream: true });
    let text = '';
    let finish: string | null = null;
    let sawUsage = false;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) sawUsage = true;
    }
    expect(text).toBe('Hello there');
    expect(finish).toBe('stop');
    expect(sawUsage).toBe(false);
  });

  it('streams with the usage chunk when asked', async () => {
    const stream = await client.chat.completions.create({ model: 'claude-text', messages: [{ role: 'user', content: 'Count me' }], stream: true, stream_options: { include_usage: true } });
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
    expect(usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 2, total_tokens: 13 });
  });

  it('returns a tool call, whole and as streamed deltas', async () => {
    const whole = await client.chat.completions.create({ model: 'claude-tools', messages: [{ role: 'user', content: 'Weather?' }], tools: [weatherTool] });
    expect(whole.choices[0]?.finish_reason).toBe('tool_calls');
    expect(whole.choices[0]?.message.tool_calls?.[0]).toMatchObject({ id: 'toolu_01A', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } });

    const runner = client.chat.completions.stream({ model: 'claude-tools', messages: [{ role: 'user', content: 'Weather?' }], tools: [weatherTool] });
    const final = await runner.finalChatCompletion();
    const call = final.choices[0]?.message.tool_calls?.[0];
    expect(call && 'function' in call ? call.function : null).toMatchObject({ name: 'get_weather' });
    expect(JSON.parse(call && 'function' in call ? call.function.arguments : '')).toEqual({ city: 'Paris' });
    expect(final.choices[0]?.finish_reason).toBe('tool_calls');
  });

  it('answers the tool result in a conversation Anthropic accepts', async () => {
    const res = await client.chat.completions.create({
      model: 'claude-text',
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_01A', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'toolu_01A', content: 'Sunny' },
      ],
      tools: [weatherTool],
    });
    expect(res.choices[0]?.message.content).toBe('Hello there');
    const sent = upstream.lastRequest()?.body as { messages: { role: string; content: unknown }[] };
    expect(sent.messages[2]).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01A', content: 'Sunny' }] });
  });

  it("surfaces the provider's errors with the gateway's statuses", async () => {
    const bad = await apiError(client.chat.completions.create({ model: 'claude-400', messages: [{ role: 'user', content: 'x' }] }));
    expect(bad.status).toBe(400);
    expect(bad.code).toBe('INVALID_REQUEST');
    expect(bad.message).toContain('bad request from provider');

    const limited = await apiError(client.chat.completions.create({ model: 'claude-429', messages: [{ role: 'user', content: 'x' }] }));
    expect(limited.status).toBe(429);
    expect(limited.code).toBe('RATE_LIMITED');
    expect(limited.headers?.get('retry-after')).toBe('7');

    // The provider refusing the gateway's own key is not the client's 401.
    const misconfigured = await apiError(client.chat.completions.create({ model: 'claude-bad-key', messages: [{ role: 'user', content: 'x' }] }));
    expect(misconfigured.status).toBe(502);
    expect(misconfigured.code).toBe('UPSTREAM_ERROR');
    expect(misconfigured.message).not.toContain(PROVIDER_KEY);
  });

  it('refuses a field Anthropic cannot honour, naming it', async () => {
    const before = upstream.requests();
    const err = await apiError(client.chat.completions.create({ model: 'claude-text', messages: [{ role: 'user', content: 'x' }], response_format: { type: 'json_object' } }));
    expect(err.status).toBe(400);
    expect(err.code).toBe('UNSUPPORTED_PARAMETER');
    expect(err.type).toBe('invalid_request_error');
    expect(err.param).toBe('response_format');
    // Refused at admission: Anthropic never hears of it.
    expect(upstream.requests()).toBe(before);
  });

  it('drops a field that only tunes the answer, naming it in x-gateway-dropped-params', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: 'claude-text', messages: [{ role: 'user', content: 'x' }], seed: 7, frequency_penalty: 0.5 })
      .withResponse();
    expect(response.status).toBe(200);
    expect(response.headers.get('x-gateway-dropped-params')).toBe('seed,frequency_penalty');
    expect(data.choices[0]?.message.content).toBe('Hello there');
    const sent = upstream.lastRequest()?.body as Record<string, unknown>;
    expect(sent).not.toHaveProperty('seed');
    expect(sent).not.toHaveProperty('frequency_penalty');
  });

  it('records usage with the provider token counts, streams included', async () => {
    const { usage } = await h.records();
    const answered = usage.filter((u) => u.model === 'claude-text' && u.finish_reason === 'stop');
    expect(answered.some((u) => u.stream)).toBe(true);
    expect(answered.some((u) => !u.stream)).toBe(true);
    for (const u of answered) {
      expect(u.provider).toBe('claude');
      expect(u.tokens).toMatchObject({ input: 11, output: 2, total: 13 });
    }
    expect(usage.filter((u) => u.model === 'claude-tools').map((u) => u.finish_reason)).toEqual(['tool_calls', 'tool_calls']);
  });
});
