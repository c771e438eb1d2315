import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../test-support/processes.js';
import { projectTestKey, type TestKey } from '../../test-support/redis.js';
import { startHarness, type Harness } from './harness.js';

/** The official SDK against the proxy serving the built-in mock provider: a real client's view. */
let h: Harness;
let key: TestKey;
let client: OpenAI;

beforeAll(async () => {
  h = await startHarness(
    'mock-provider',
    `providers:
  - name: offline
    type: mock
    models: [mock-1]
    options: { chunks: 3 }
`,
  );
  key = await projectTestKey(h.redis, h.keys);
  client = new OpenAI({ apiKey: key.key, baseURL: `${h.url}/v1`, maxRetries: 0 });
});

afterAll(async () => {
  await h?.stop();
});

const lookup = {
  type: 'function' as const,
  function: { name: 'lookup_order', description: 'Find an order', parameters: { type: 'object', properties: { order_id: { type: 'string' }, verbose: { type: 'boolean' } }, required: ['order_id'] } },
};

describe('the built-in mock provider through the gateway', () => {
  it('stops at max_tokens and bills what it answered', async () => {
    const res = await client.chat.completions.create({ model: 'mock-1', messages: [{ role: 'user', content: 'Write me an essay' }], max_tokens: 2 });
    expect(res.choices[0]?.message.content).toBe('This is');
    expect(res.choices[0]?.finish_reason).toBe('length');
    expect(res.usage?.completion_tokens).toBe(2);
    const usage = await eventually(async () => (await h.records()).usage.find((u) => u.request_id === res.id.replace('chatcmpl-', '')), 'usage record');
    expect(usage.tokens).toEqual({ input: res.usage?.prompt_tokens, output: 2, total: res.usage?.total_tokens, cached: 0 });
    expect(usage.finish_reason).toBe('max_tokens');
  });

  it('calls a tool the SDK can read, streamed, and answers its result with text', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Where is my parcel?' }];
    const runner = client.chat.completions.stream({ model: 'mock-1', messages, tools: [lookup], tool_choice: 'required', stream_options: { include_usage: true } });
    const first = await runner.finalChatCompletion();
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    const call = first.choices[0]?.message.tool_calls?.[0];
    if (call?.type !== 'function') throw new Error('expected a function call');
    expect(call.function.name).toBe('lookup_order');
    expect(JSON.parse(call.function.arguments)).toEqual({ order_id: 'example order_id' });
    expect(first.usage?.completion_tokens).toBeGreaterThan(1);

    messages.push(first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: 'shipped yesterday' });
    const second = await client.chat.completions.create({ model: 'mock-1', messages, tools: [lookup] });
    expect(second.choices[0]?.finish_reason).toBe('stop');
    expect(second.choices[0]?.message.content).toBe('The lookup_order tool returned: shipped yesterday');
  });
});
