import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnMockUpstream, type MockUpstreamProcess } from '../../test-support/processes.js';
import { projectTestKey, type TestKey } from '../../test-support/redis.js';
import { startHarness, type Harness } from './harness.js';

/** The official SDK, unmodified, against the proxy in front of an OpenAI-wire upstream process. */
let upstream: MockUpstreamProcess;
let h: Harness;
let key: TestKey;
let client: OpenAI;

beforeAll(async () => {
  // A gap between chunks, as real providers have: the end of the body then arrives after [DONE].
  upstream = await spawnMockUpstream({ MOCK_GAP_MS: '2' });
  h = await startHarness(
    'sdk',
    `providers:
  - name: upstream
    type: openai
    base_url: ${upstream.baseUrl}
    api_key: sk-upstream-provider-secret
    models: [gpt-4o-mini]
`,
  );
  key = await projectTestKey(h.redis, h.keys);
  client = new OpenAI({ apiKey: key.key, baseURL: `${h.url}/v1`, maxRetries: 0 });
});

afterAll(async () => {
  await h?.stop();
  await upstream?.stop();
});

const weatherTool = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};

describe('official openai SDK through the gateway', () => {
  it('completes a non-streaming request', async () => {
    const res = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi there' }] });
    expect(res.object).toBe('chat.completion');
    expect(res.choices[0]?.message.content).toContain('mock upstream');
    expect(res.usage?.total_tokens).toBeGreaterThan(0);
  });

  it('streams, and hides the usage chunk it did not ask for', async () => {
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Stream please' }], stream: true });
    let text = '';
    let sawUsage = false;
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) sawUsage = true;
    }
    expect(text).toContain('Hello from the mock upstream');
    expect(finish).toBe('stop');
    expect(sawUsage).toBe(false);
    // The gateway itself asked the provider for usage, so the stream is billed with true counts.
    const seen = await upstream.stats();
    expect(seen.lastBody.stream_options).toEqual({ include_usage: true });
  });

  it('streams with the usage chunk when the client asks for it', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Count me' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
    expect(usage?.total_tokens).toBeGreaterThan(0);
  });

  it('returns tool calls, whole and as streamed deltas', async () => {
    const whole = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Weather?' }], tools: [weatherTool] });
    expect(whole.choices[0]?.finish_reason).toBe('tool_calls');
    expect(whole.choices[0]?.message.tool_calls?.[0]).toMatchObject({ type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } });

    const runner = client.chat.completions.stream({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Weather?' }], tools: [weatherTool] });
    const final = await runner.finalChatCompletion();
    const call = final.choices[0]?.message.tool_calls?.[0];
    expect(call?.type).toBe('function');
    expect(call && 'function' in call ? call.function : null).toMatchObject({ name: 'get_weather', arguments: '{"city":"Paris"}' });
    expect(final.choices[0]?.finish_reason).toBe('tool_calls');
  });

  it('reads every stream to its end, so upstream connections are reused, not aborted', async () => {
    expect((await upstream.stats()).streams).toBeGreaterThan(0);
    expect((await upstream.stats()).aborted).toBe(0);
  });

  it('sends the provider its own key and never the client key', async () => {
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] });
    const seen = await upstream.stats();
    expect(seen.lastHeaders.authorization).toBe('Bearer sk-upstream-provider-secret');
    expect(JSON.stringify(seen.lastHeaders)).not.toContain(key.key);
  });

  it('records usage with the provider token counts, streams included', async () => {
    const { usage, audit } = await h.records();
    const streamed = usage.filter((u) => u.stream);
    expect(streamed.length).toBeGreaterThanOrEqual(2);
    for (const u of usage) {
      expect(u.key_id).toBe(key.id);
      expect(u.project_id).toBe(key.projectId);
      expect(u.provider).toBe('upstream');
      expect(u.tokens.input).toBeGreaterThan(0);
      expect(u.tokens.output).toBeGreaterThan(0);
      expect(u.tokens.total).toBe(u.tokens.input + u.tokens.output);
    }
    expect(usage.map((u) => u.finish_reason)).toContain('tool_calls');
    // One audit event per request, each a success here.
    expect(audit.length).toBe(usage.length);
    expect(new Set(audit.map((a) => a.outcome))).toEqual(new Set(['success']));
  });
});
