import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnthropicAdapter } from '../../proxy/src/providers/anthropic/anthropic-adapter.js';
import { Cancel } from '../../proxy/src/providers/cancel.js';
import { chatRequest } from '../../proxy/src/providers/conformance.case.js';
import { startMockUpstream, type MockUpstream } from './mock-upstream.js';

/**
 * The bench mock's Anthropic route must speak the wire the anthropic adapter reads, with the same
 * chunking as the OpenAI route, or the anthropic scenario would measure failures.
 */
let upstream: MockUpstream;
let client: AnthropicAdapter;
beforeAll(async () => {
  upstream = await startMockUpstream({ defaults: { chunks: 5 } });
  client = new AnthropicAdapter({
    name: 'bench-anthropic',
    type: 'anthropic',
    base_url: `http://127.0.0.1:${upstream.port}`,
    api_key: null,
    models: [{ id: 'bench-model', upstream: 'bench-model', price: null }],
    connect_timeout_ms: 1000,
    timeout_ms: 5000,
    idle_timeout_ms: 5000,
    max_connections: 2,
    max_queued: 10,
    options: {},
  });
});
afterAll(async () => {
  await client?.close();
  upstream?.close();
});

const adapter = () => client;

describe('mock upstream, Anthropic route', () => {
  it('answers a message the adapter translates', async () => {
    const result = await adapter().complete(chatRequest('bench-model', { max_tokens: 64 }), new Cancel());
    const body = JSON.parse(result.body.toString('utf8')) as { choices: { message: { content: string } }[] };
    expect(body.choices[0]?.message.content).toContain('Hello from the mock upstream');
    expect(result.finishReason).toBe('stop');
    expect(result.usage.input).toBeGreaterThan(0);
    expect(upstream.stats.lastHeaders['anthropic-version']).toBe('2023-06-01');
  });

  it('streams the default number of content chunks, then one finish and the usage chunk', async () => {
    const { meta, events } = await adapter().stream(chatRequest('bench-model', { stream: true, stream_options: { include_usage: true } }), new Cancel());
    const chunks: { choices: { delta: { content?: string }; finish_reason: string | null }[] }[] = [];
    for await (const data of events) chunks.push(JSON.parse(data));
    expect(chunks.filter((c) => c.choices[0]?.delta.content)).toHaveLength(5);
    expect(chunks.filter((c) => c.choices[0]?.finish_reason).map((c) => c.choices[0]?.finish_reason)).toEqual(['stop']);
    expect(chunks.at(-1)?.choices).toEqual([]);
    expect(meta.usage?.output).toBeGreaterThan(0);
  });

  it('streams a tool call and answers errors in Anthropic’s shape', async () => {
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }];
    const { meta, events } = await adapter().stream(chatRequest('bench-model', { stream: true, tools }), new Cancel());
    let args = '';
    for await (const data of events) args += (JSON.parse(data) as { choices: { delta: { tool_calls?: { function: { arguments?: string } }[] } }[] }).choices[0]?.delta.tool_calls?.[0]?.function.arguments ?? '';
    expect(JSON.parse(args)).toEqual({ city: 'Paris' });
    expect(meta.finishReason).toBe('tool_calls');

    const res = await fetch(`http://127.0.0.1:${upstream.port}/v1/messages`, { method: 'POST', body: JSON.stringify({ model: 'm', max_tokens: 1, messages: [], mock: { status: 429, retry_after: '3' } }) });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('3');
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
  });
});
