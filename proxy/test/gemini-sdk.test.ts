import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectTestKey, type TestKey } from '../../test-support/redis.js';
import type { RunningWireMock } from '../../test-support/wire-mock.js';
import { startGeminiWireMock } from './wire-mocks/gemini-wire-mock.js';
import { startHarness, type Harness } from './harness.js';

/** The official SDK, unmodified, against the proxy in front of a Gemini-wire upstream. */
const PROVIDER_KEY = 'AIzaSyGatewayTestKey-0123456789abcdefgh';
let upstream: RunningWireMock;
let h: Harness;
let key: TestKey;
let client: OpenAI;

beforeAll(async () => {
  upstream = await startGeminiWireMock(PROVIDER_KEY);
  h = await startHarness(
    'gemini-sdk',
    `providers:
  - name: google
    type: gemini
    base_url: ${upstream.baseUrl}
    api_key: ${PROVIDER_KEY}
    models:
      - { id: gemini-fast, upstream: conf-text }
      - { id: gemini-tools, upstream: conf-tools }
      - { id: gemini-refuses, upstream: conf-400 }
      - { id: gemini-busy, upstream: conf-429 }
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
  function: { name: 'get_weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

describe('official openai SDK through the gateway to Gemini', () => {
  it('completes a non-streaming request', async () => {
    const res = await client.chat.completions.create({ model: 'gemini-fast', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi there' }] });
    expect(res.object).toBe('chat.completion');
    expect(res.model).toBe('gemini-fast');
    expect(res.choices[0]?.message).toMatchObject({ role: 'assistant', content: 'Hello there' });
    expect(res.choices[0]?.finish_reason).toBe('stop');
    expect(res.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 2, total_tokens: 13, prompt_tokens_details: { cached_tokens: 3 } });
    const seen = upstream.lastRequest();
    expect(seen?.path).toBe('/v1beta/models/conf-text:generateContent');
    expect(seen?.body).toMatchObject({ systemInstruction: { parts: [{ text: 'Be brief.' }] }, contents: [{ role: 'user', parts: [{ text: 'Hi there' }] }] });
  });

  it('streams, without the usage chunk it did not ask for', async () => {
    const stream = await client.chat.completions.create({ model: 'gemini-fast', messages: [{ role: 'user', content: 'Stream please' }], stream: true });
    let text = '';
    let sawUsage = false;
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) sawUsage = true;
    }
    expect(text).toBe('Hello there');
    expect(finish).toBe('stop');
    expect(sawUsage).toBe(false);
    expect(upstream.lastRequest()?.path).toBe('/v1beta/models/conf-text:streamGenerateContent?alt=sse');
  });

  it('streams with the usage chunk when the client asks for it', async () => {
    const stream = await client.chat.completions.create({ model: 'gemini-fast', messages: [{ role: 'user', content: 'Count me' }], stream: true, stream_options: { include_usage: true } });
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
    expect(usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 2, total_tokens: 13 });
  });

  it('returns tool calls, whole and as streamed deltas, and takes the results back', async () => {
    const whole = await client.chat.completions.create({ model: 'gemini-tools', messages: [{ role: 'user', content: 'Weather?' }], tools: [weatherTool], tool_choice: 'required' });
    expect(whole.choices[0]?.finish_reason).toBe('tool_calls');
    const call = whole.choices[0]?.message.tool_calls?.[0];
    expect(call).toMatchObject({ id: 'call_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } });
    expect(upstream.lastRequest()?.body).toMatchObject({ toolConfig: { functionCallingConfig: { mode: 'ANY' } } });

    const runner = client.chat.completions.stream({ model: 'gemini-tools', messages: [{ role: 'user', content: 'Weather?' }], tools: [weatherTool] });
    const final = await runner.finalChatCompletion();
    const streamed = final.choices[0]?.message.tool_calls?.[0];
    expect(streamed && 'function' in streamed ? streamed.function : null).toMatchObject({ name: 'get_weather', arguments: '{"city":"Paris"}' });
    expect(final.choices[0]?.finish_reason).toBe('tool_calls');

    await client.chat.completions.create({
      model: 'gemini-fast',
      tools: [weatherTool],
      messages: [{ role: 'user', content: 'Weather?' }, whole.choices[0]!.message, { role: 'tool', tool_call_id: 'call_0', content: '{"temp":21}' }],
    });
    expect((upstream.lastRequest()?.body as { contents: unknown[] }).contents.slice(1)).toEqual([
      { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'skip_thought_signature_validator' }] },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temp: 21 } } }] },
    ]);
  });

  it("surfaces the provider's refusal as 400 and its rate limit as 429 with Retry-After", async () => {
    const refused = await client.chat.completions.create({ model: 'gemini-refuses', messages: [{ role: 'user', content: 'x' }] }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('INVALID_REQUEST');
    expect((refused as Error).message).toContain('bad request from provider');

    const busy = await client.chat.completions.create({ model: 'gemini-busy', messages: [{ role: 'user', content: 'x' }] }).catch((err: unknown) => err);
    expect(busy).toBeInstanceOf(OpenAI.RateLimitError);
    expect((busy as InstanceType<typeof OpenAI.RateLimitError>).headers.get('retry-after')).toBe('7');
  });

  it('refuses a field Gemini cannot honour with 400 naming it', async () => {
    const before = upstream.requests();
    const err = await client.chat.completions.create({ model: 'gemini-fast', messages: [{ role: 'user', content: 'x' }], logprobs: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('logprobs');
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('UNSUPPORTED_PARAMETER');
    expect(upstream.requests()).toBe(before);
  });

  it('sends the provider its own key and never the client key', async () => {
    await client.chat.completions.create({ model: 'gemini-fast', messages: [{ role: 'user', content: 'x' }] });
    const seen = upstream.lastRequest();
    expect(seen?.headers['x-goog-api-key']).toBe(PROVIDER_KEY);
    expect(JSON.stringify(seen)).not.toContain(key.key);
  });

  it('records usage with the provider token counts and finish reasons, streams included', async () => {
    const { usage, audit, raw } = await h.records();
    const served = usage.filter((u) => u.finish_reason !== 'error');
    // Refused by the provider: recorded as errors.
    expect(usage.filter((u) => u.finish_reason === 'error').map((u) => u.model).sort()).toEqual(['gemini-busy', 'gemini-refuses']);
    // Refused at admission (logprobs), before any provider was called: audited, never billed.
    const refused = audit.filter((a) => a.error_code === 'UNSUPPORTED_PARAMETER');
    expect(refused).toEqual([expect.objectContaining({ outcome: 'error', status: 400, model: 'gemini-fast' })]);
    expect(usage.some((u) => u.id === refused[0]?.id)).toBe(false);
    expect(served.filter((u) => u.stream).length).toBeGreaterThanOrEqual(2);
    for (const u of served) {
      expect(u.provider).toBe('google');
      expect(u.tokens.input).toBeGreaterThan(0);
      expect(u.tokens.total).toBe(u.tokens.input + u.tokens.output);
    }
    expect(served.map((u) => u.finish_reason)).toContain('tool_calls');
    expect(served.find((u) => u.model === 'gemini-fast' && !u.stream)?.tokens).toMatchObject({ input: 11, output: 2, total: 13 });
    expect(raw.join('\n')).not.toContain(PROVIDER_KEY);
  });
});
