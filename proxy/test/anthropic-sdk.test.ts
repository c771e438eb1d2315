import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectTestKey, type TestKey } from '../../test-support/redis.js';
import type { RunningWireMock } from '../../test-support/wire-mock.js';
import { startOpenAiWireMock } from './wire-mocks/openai-wire-mock.js';
import { startHarness, type Harness } from './harness.js';

/**
 * The official Anthropic SDK, unmodified, against POST /v1/messages of the real proxy: the
 * built-in mock provider answers (it honours max_tokens, stop, tools and tool results), and an
 * OpenAI-wire upstream shows what the provider was sent.
 */
let wire: RunningWireMock;
let h: Harness;
let key: TestKey;
let client: Anthropic;

beforeAll(async () => {
  wire = await startOpenAiWireMock();
  h = await startHarness(
    'anthropic-sdk',
    `providers:
  - name: builtin
    type: mock
    models: [claude-mock]
    options: { chunks: 4 }
  - name: wire
    type: openai
    base_url: ${wire.baseUrl}/v1
    models: [{ id: claude-wire, upstream: conf-text }]
`,
  );
  key = await projectTestKey(h.redis, h.keys);
  client = new Anthropic({ apiKey: key.key, baseURL: h.url, maxRetries: 0 });
});

afterAll(async () => {
  await h?.stop();
  await wire?.close();
});

const weather: Anthropic.Tool = {
  name: 'get_weather',
  description: 'Current weather in a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

function textOf(message: Anthropic.Message): string {
  return message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
}

describe('official @anthropic-ai/sdk through POST /v1/messages', () => {
  it('creates a message', async () => {
    const message = await client.messages.create({ model: 'claude-mock', max_tokens: 200, messages: [{ role: 'user', content: 'Hello gateway' }] });
    expect(message.id).toMatch(/^msg_/);
    expect(message.type).toBe('message');
    expect(message.role).toBe('assistant');
    expect(message.model).toBe('claude-mock');
    expect(textOf(message)).toBe("This is the gateway's built-in mock provider. You said: Hello gateway");
    expect(message.stop_reason).toBe('end_turn');
    expect(message.stop_sequence).toBeNull();
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
  });

  it('accepts the key as Authorization: Bearer (authToken)', async () => {
    const bearer = new Anthropic({ apiKey: null, authToken: key.key, baseURL: h.url, maxRetries: 0 });
    const message = await bearer.messages.create({ model: 'claude-mock', max_tokens: 50, messages: [{ role: 'user', content: 'bearer' }] });
    expect(textOf(message)).toContain('You said: bearer');
  });

  it('sends the system prompt, stop sequences and sampling settings to the provider in its format', async () => {
    // This SDK's types no longer list the sampling settings; the API and the gateway still take them.
    const sampling = { temperature: 0.5, top_p: 0.9 };
    const message = await client.messages.create({
      model: 'claude-wire',
      max_tokens: 64,
      system: [{ type: 'text', text: 'You are terse.' }],
      messages: [{ role: 'user', content: 'Hi' }],
      stop_sequences: ['END'],
      metadata: { user_id: 'user-42' },
      ...sampling,
    });
    expect(textOf(message)).toBe('Hello there');
    const sent = wire.lastRequest()?.body;
    expect(sent).toMatchObject({
      model: 'conf-text',
      max_tokens: 64,
      messages: [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Hi' }],
      stop: ['END'],
      temperature: 0.5,
      top_p: 0.9,
      user: 'user-42',
    });
    // The provider reported 11 prompt tokens, 3 of them from its cache.
    expect(message.usage).toMatchObject({ input_tokens: 8, cache_read_input_tokens: 3, cache_creation_input_tokens: 0, output_tokens: 2 });
  });

  it('cuts the answer at a stop sequence', async () => {
    const message = await client.messages.create({ model: 'claude-mock', max_tokens: 200, stop_sequences: ['STOP'], messages: [{ role: 'user', content: 'one two STOP three' }] });
    expect(textOf(message)).toBe("This is the gateway's built-in mock provider. You said: one two");
    expect(message.stop_reason).toBe('end_turn');
  });

  it('reports max_tokens as the stop reason when the answer is cut by it', async () => {
    const message = await client.messages.create({ model: 'claude-mock', max_tokens: 3, messages: [{ role: 'user', content: 'a long enough message' }] });
    expect(message.stop_reason).toBe('max_tokens');
    expect(message.usage.output_tokens).toBe(3);
  });

  it('reads image blocks', async () => {
    const message = await client.messages.create({
      model: 'claude-mock',
      max_tokens: 100,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }] }],
    });
    expect(textOf(message)).toContain('You said: What is this? [image]');
  });

  it('streams with the .stream() helper, ending with the provider token counts', async () => {
    const params = { model: 'claude-mock', max_tokens: 200, messages: [{ role: 'user' as const, content: 'Stream me, please' }] };
    const whole = await client.messages.create(params);
    const stream = client.messages.stream(params);
    let text = '';
    stream.on('text', (piece) => {
      text += piece;
    });
    const final = await stream.finalMessage();
    expect(text).toBe(textOf(whole));
    expect(textOf(final)).toBe(textOf(whole));
    expect(final.stop_reason).toBe('end_turn');
    expect(final.model).toBe('claude-mock');
    // message_start carried the gateway's estimate; message_delta the provider's own count.
    expect(final.usage.input_tokens).toBe(whole.usage.input_tokens);
    expect(final.usage.output_tokens).toBe(whole.usage.output_tokens);
  });

  it('streams with stream: true as the exact event sequence', async () => {
    const stream = await client.messages.create({ model: 'claude-mock', max_tokens: 200, stream: true, messages: [{ role: 'user', content: 'Events' }] });
    const types: string[] = [];
    let text = '';
    let startTokens = -1;
    let finalUsage: Anthropic.MessageDeltaUsage | null = null;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'message_start') startTokens = event.message.usage.input_tokens;
      if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
      if (event.type === 'message_delta') {
        expect(event.delta.stop_reason).toBe('end_turn');
        finalUsage = event.usage;
      }
    }
    expect(types[0]).toBe('message_start');
    expect(types[1]).toBe('content_block_start');
    expect(types.filter((t) => t === 'content_block_delta').length).toBeGreaterThan(1);
    expect(types.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
    expect(text).toBe("This is the gateway's built-in mock provider. You said: Events");
    const usage = finalUsage as Anthropic.MessageDeltaUsage | null;
    expect(usage?.output_tokens).toBeGreaterThan(0);
    // The estimate sent first is never below the count that follows.
    expect(startTokens).toBeGreaterThanOrEqual(usage?.input_tokens ?? Infinity);
  });

  it('calls a tool, and answers from its tool_result', async () => {
    const question: Anthropic.MessageParam = { role: 'user', content: 'Please use get_weather for Paris' };
    const call = await client.messages.create({ model: 'claude-mock', max_tokens: 200, tools: [weather], messages: [question] });
    expect(call.stop_reason).toBe('tool_use');
    const toolUse = call.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
    expect(toolUse).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'example city' } });
    expect(toolUse?.id).toBeTruthy();

    const answer = await client.messages.create({
      model: 'claude-mock',
      max_tokens: 200,
      tools: [weather],
      messages: [question, { role: 'assistant', content: call.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse!.id, content: 'sunny, 21 C' }] }],
    });
    expect(answer.stop_reason).toBe('end_turn');
    expect(textOf(answer)).toBe('The get_weather tool returned: sunny, 21 C');
  });

  it('honours tool_choice: a named tool, any, and none', async () => {
    const named = await client.messages.create({ model: 'claude-mock', max_tokens: 200, tools: [weather], tool_choice: { type: 'tool', name: 'get_weather' }, messages: [{ role: 'user', content: 'Hi' }] });
    expect(named.content[0]).toMatchObject({ type: 'tool_use', name: 'get_weather' });
    const any = await client.messages.create({ model: 'claude-mock', max_tokens: 200, tools: [weather], tool_choice: { type: 'any' }, messages: [{ role: 'user', content: 'Hi' }] });
    expect(any.stop_reason).toBe('tool_use');
    const none = await client.messages.create({ model: 'claude-mock', max_tokens: 200, tools: [weather], tool_choice: { type: 'none' }, messages: [{ role: 'user', content: 'use get_weather' }] });
    expect(none.stop_reason).toBe('end_turn');
  });

  it('streams a tool call as input_json_delta pieces the SDK assembles', async () => {
    const params = { model: 'claude-mock', max_tokens: 200, tools: [weather], messages: [{ role: 'user' as const, content: 'use get_weather now' }] };
    const whole = await client.messages.create(params);
    const stream = client.messages.stream(params);
    const pieces: string[] = [];
    stream.on('inputJson', (partial) => {
      pieces.push(partial);
    });
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    const streamed = final.content.find((b) => b.type === 'tool_use');
    expect(streamed).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'example city' } });
    expect(streamed).toEqual(whole.content.find((b) => b.type === 'tool_use'));
    expect(pieces.length).toBeGreaterThan(1);
    expect(final.usage.output_tokens).toBe(whole.usage.output_tokens);
  });

  it('counts tokens with the gateway estimate, never below what the provider bills', async () => {
    const params = { model: 'claude-mock', system: 'Be brief.', tools: [weather], messages: [{ role: 'user' as const, content: 'How many tokens is this?' }] };
    const counted = await client.messages.countTokens(params);
    expect(counted.input_tokens).toBeGreaterThan(0);
    const billed = await client.messages.create({ ...params, max_tokens: 50, tool_choice: { type: 'none' } });
    expect(counted.input_tokens).toBeGreaterThanOrEqual(billed.usage.input_tokens);
  });

  it('maps refusals to the SDK error classes', async () => {
    const noKey = new Anthropic({ apiKey: 'gw_thisKeyDoesNotExistAnywhere0000000000000', baseURL: h.url, maxRetries: 0 });
    await expect(noKey.messages.create({ model: 'claude-mock', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    await expect(client.messages.create({ model: 'claude-nowhere', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    // A tool Anthropic's API runs itself cannot be routed: still refused, naming the field.
    const bad = client.messages.create({ model: 'claude-mock', max_tokens: 10, messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'web_search_20250305', name: 'web_search' }] });
    await expect(bad).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    await expect(bad).rejects.toMatchObject({ status: 400, error: { type: 'error', error: { type: 'invalid_request_error', message: expect.stringMatching(/^tools\.0\.type: not supported/) } } });
  });

  it('answers a body with a field that only tunes the answer, naming what it dropped', async () => {
    // top_k has no counterpart in the internal request: left out and named, no longer refused.
    const topK = { top_k: 5 };
    const { data, response } = await client.messages.create({ model: 'claude-mock', max_tokens: 50, messages: [{ role: 'user', content: 'tuned' }], ...topK }).withResponse();
    expect(response.status).toBe(200);
    expect(response.headers.get('x-gateway-dropped-params')).toBe('top_k');
    expect(textOf(data)).toContain('You said: tuned');
  });

  it('leaves one audit event per request and a usage record for each one a provider answered', async () => {
    const { usage, audit } = await h.records();
    const mine = audit.filter((a) => a.key_id === key.id);
    expect(new Set(mine.map((a) => a.id)).size).toBe(mine.length);
    const served = mine.filter((a) => a.outcome === 'success');
    // Every success but the token count reached a provider, and is billed once.
    expect(usage.filter((u) => u.key_id === key.id).length).toBe(served.length - 1);
    for (const u of usage) expect(u.tokens.total).toBe(u.tokens.input + u.tokens.output);
    expect(new Set(usage.map((u) => u.finish_reason))).toEqual(new Set(['stop', 'max_tokens', 'tool_calls']));
    expect(usage.filter((u) => u.stream).length).toBe(3);
    expect(mine.filter((a) => a.status === 404 && a.error_code === 'MODEL_NOT_FOUND').length).toBe(1);
    expect(mine.filter((a) => a.status === 400 && a.error_code === 'INVALID_REQUEST').length).toBe(1);
  });
});
