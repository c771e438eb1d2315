import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeGuardrailSet, encodeProjectPolicy, NO_RATE_LIMITS, type UsageRecord } from '@gateway/shared';
import { projectTestKey, type TestKey } from '../../test-support/redis.js';
import type { RunningWireMock } from '../../test-support/wire-mock.js';
import { EXTRA, startAnthropicWireMock } from './wire-mocks/anthropic-wire-mock.js';
import { startOpenAiWireMock } from './wire-mocks/openai-wire-mock.js';
import { startHarness, type Harness } from './harness.js';

/**
 * Provider prompt caching through the real proxy with the official SDKs: `cache_control` reaches
 * an Anthropic-typed provider from OpenAI-shape chat requests (content parts, messages, tools)
 * and from /v1/messages as the client sent it; the usage record carries the prompt tokens read
 * from the cache (`cached`) and written to it (`cache_write`), and `cost_usd` prices each part.
 * The Anthropic mock's `anth-thinking` answer reports 5 plain, 2 cache-read and 4 cache-written
 * prompt tokens and 9 output tokens.
 */
let anthropicWire: RunningWireMock;
let openaiWire: RunningWireMock;
let h: Harness;
let key: TestKey;

const PRICE = { input: 3, output: 15, cached_input: 0.3, cache_write: 3.75 };

beforeAll(async () => {
  anthropicWire = await startAnthropicWireMock();
  openaiWire = await startOpenAiWireMock();
  h = await startHarness(
    'prompt-caching',
    `providers:
  - name: claude
    type: anthropic
    base_url: ${anthropicWire.baseUrl}
    api_key: sk-ant-test
    models:
      - { id: cached-claude, upstream: ${EXTRA.thinking}, price: { input: 3, output: 15, cached_input: 0.3, cache_write: 3.75 } }
      - { id: writes-as-input, upstream: ${EXTRA.thinking}, price: { input: 3, output: 15, cached_input: 0.3 } }
  - name: oa
    type: openai
    base_url: ${openaiWire.baseUrl}/v1
    models: [{ id: cached-gpt, upstream: conf-text, price: { input: 2.5, output: 10, cached_input: 1.25 } }]
`,
  );
  key = await projectTestKey(h.redis, h.keys);
});

afterAll(async () => {
  await h?.stop();
  await anthropicWire?.close();
  await openaiWire?.close();
});

const openai = () => new OpenAI({ apiKey: key.key, baseURL: `${h.url}/v1`, maxRetries: 0 });

async function usageOf(requestId: string | null): Promise<UsageRecord> {
  const { usage } = await h.records();
  const record = usage.find((u) => u.request_id === requestId);
  expect(record).toBeDefined();
  return record as UsageRecord;
}

const anthropicCost = (p: { input: number; output: number; cached_input: number; cache_write: number }) => (5 * p.input + 2 * p.cached_input + 4 * p.cache_write + 9 * p.output) / 1e6;

/** An OpenAI-shape body with a breakpoint on a system part, on a user message and on a tool. */
const cachedChat = {
  model: 'cached-claude',
  max_tokens: 100,
  messages: [
    { role: 'system', content: [{ type: 'text', text: 'A long shared preamble.', cache_control: { type: 'ephemeral' } }] },
    { role: 'user', content: 'The question.', cache_control: { type: 'ephemeral', ttl: '1h' } },
  ],
  tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } }, cache_control: { type: 'ephemeral' } }],
} as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;

describe('provider prompt caching', () => {
  it('sends cache_control of an OpenAI-shape chat request on to Anthropic, and prices reads and writes apart', async () => {
    const { data, response } = await openai().chat.completions.create(cachedChat).withResponse();
    expect(data.usage).toMatchObject({ prompt_tokens: 11, prompt_tokens_details: { cached_tokens: 2 } });
    const sent = anthropicWire.lastRequest()?.body as { system: unknown; messages: { content: unknown }[]; tools: { cache_control?: unknown }[] };
    expect(sent.system).toEqual([{ type: 'text', text: 'A long shared preamble.', cache_control: { type: 'ephemeral' } }]);
    expect(sent.messages[0]?.content).toEqual([{ type: 'text', text: 'The question.', cache_control: { type: 'ephemeral', ttl: '1h' } }]);
    expect(sent.tools[0]?.cache_control).toEqual({ type: 'ephemeral' });
    const usage = await usageOf(response.headers.get('x-request-id'));
    expect(usage.tokens).toEqual({ input: 11, output: 9, total: 20, cached: 2, cache_write: 4 });
    expect(usage.cost_usd).toBeCloseTo(anthropicCost(PRICE), 12);
  });

  it('counts the same for a streamed answer', async () => {
    const stream = await openai().chat.completions.create({ ...cachedChat, stream: true, stream_options: { include_usage: true } }).withResponse();
    let last: OpenAI.Chat.ChatCompletionChunk | undefined;
    for await (const chunk of stream.data) last = chunk;
    expect(last?.usage?.prompt_tokens).toBe(11);
    const usage = await usageOf(stream.response.headers.get('x-request-id'));
    expect(usage.tokens).toEqual({ input: 11, output: 9, total: 20, cached: 2, cache_write: 4 });
    expect(usage.cost_usd).toBeCloseTo(anthropicCost(PRICE), 12);
  });

  it('passes cache_control of /v1/messages through as the client sent it', async () => {
    const client = new Anthropic({ apiKey: key.key, baseURL: h.url, maxRetries: 0 });
    const { response } = await client.messages
      .create({
        model: 'cached-claude',
        max_tokens: 100,
        system: [{ type: 'text', text: 'A long shared preamble.', cache_control: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'The question.', cache_control: { type: 'ephemeral' } }] }],
      })
      .withResponse();
    const sent = anthropicWire.lastRequest()?.body as { system: unknown; messages: { content: unknown }[] };
    expect(sent.system).toEqual([{ type: 'text', text: 'A long shared preamble.', cache_control: { type: 'ephemeral' } }]);
    expect(sent.messages[0]?.content).toEqual([{ type: 'text', text: 'The question.', cache_control: { type: 'ephemeral' } }]);
    const usage = await usageOf(response.headers.get('x-request-id'));
    expect(usage.tokens).toEqual({ input: 11, output: 9, total: 20, cached: 2, cache_write: 4 });
    expect(usage.cost_usd).toBeCloseTo(anthropicCost(PRICE), 12);
  });

  it('carries cache_control of a /v1/messages request it rewrites (an input guard that masks)', async () => {
    const guarded = await projectTestKey(h.redis, h.keys);
    await h.redis.set(h.keys.projectPolicy(guarded.projectId), encodeProjectPolicy({ id: guarded.projectId, quota_tokens: null, quota_period: 'total', rate_limits: NO_RATE_LIMITS, allowed_models: null, max_tokens_cap: null }));
    await h.redis.set(h.keys.projectGuardrails(guarded.projectId), encodeGuardrailSet(guarded.projectId, [{ id: 'pii', stage: 'input', action: 'mask', type: 'pii', entities: ['email'] }]));
    const client = new Anthropic({ apiKey: guarded.key, baseURL: h.url, maxRetries: 0 });
    await client.messages.create({
      model: 'cached-claude',
      max_tokens: 100,
      system: [{ type: 'text', text: 'A long shared preamble.', cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Mail the answer to a@x.io.', cache_control: { type: 'ephemeral', ttl: '1h' } }] }],
    });
    const sent = anthropicWire.lastRequest()?.body as { system: unknown; messages: { content: unknown }[] };
    expect(sent.system).toEqual([{ type: 'text', text: 'A long shared preamble.', cache_control: { type: 'ephemeral' } }]);
    expect(sent.messages[0]?.content).toEqual([{ type: 'text', text: 'Mail the answer to <EMAIL_1>.', cache_control: { type: 'ephemeral', ttl: '1h' } }]);
  });

  it('prices cache writes as input when the model has no cache_write price', async () => {
    const { response } = await openai().chat.completions.create({ ...cachedChat, model: 'writes-as-input' }).withResponse();
    const usage = await usageOf(response.headers.get('x-request-id'));
    expect(usage.tokens.cache_write).toBe(4);
    expect(usage.cost_usd).toBeCloseTo(anthropicCost({ ...PRICE, cache_write: PRICE.input }), 12);
  });

  it("records OpenAI's cached_tokens as cache reads at the cached price", async () => {
    const { response } = await openai().chat.completions.create({ model: 'cached-gpt', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    const usage = await usageOf(response.headers.get('x-request-id'));
    // The OpenAI mock reports 11 prompt tokens, 3 of them cached, and 2 output tokens.
    expect(usage.tokens).toMatchObject({ input: 11, cached: 3, output: 2 });
    expect(usage.tokens.cache_write ?? 0).toBe(0);
    expect(usage.cost_usd).toBeCloseTo((8 * 2.5 + 3 * 1.25 + 2 * 10) / 1e6, 12);
  });

  it('refuses a cache_control Anthropic would not take, naming it', async () => {
    const res = await fetch(`${h.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key.key },
      body: JSON.stringify({ model: 'cached-claude', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'forever' } }] }] }),
    });
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: { param: string } };
    expect(error.param).toBe('messages[0].content[0].cache_control');
  });
});
