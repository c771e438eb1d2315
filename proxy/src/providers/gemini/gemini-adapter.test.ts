import { GatewayError, type ProviderConfig } from '@gateway/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningWireMock } from '../../../../test-support/wire-mock.js';
import { Cancel } from '../cancel.js';
import { chatRequest, PROVIDER_KEY, runAdapterConformance, SCENARIOS, TOOL } from '../conformance.case.js';
import { estimateEmbeddingsTokens } from '../../policy/embeddings-estimate.js';
import { floatsToBase64 } from '../embeddings-answer.js';
import { embeddingsRequest, parseAnswer } from '../embeddings-request.case.js';
import { GeminiAdapter } from './gemini-adapter.js';
import { GEMINI_WIRE_DIMENSIONS, startGeminiWireMock } from '../../../test/wire-mocks/gemini-wire-mock.js';

let mock: RunningWireMock;
beforeAll(async () => {
  mock = await startGeminiWireMock(PROVIDER_KEY);
});
afterAll(async () => {
  await mock?.close();
});

function config(overrides: Partial<ProviderConfig> = {}): ProviderConfig {
  return {
    name: 'google',
    type: 'gemini',
    base_url: mock.baseUrl,
    api_key: PROVIDER_KEY,
    models: [{ id: 'gw-model', upstream: 'conf-text', price: null }],
    connect_timeout_ms: 1000,
    timeout_ms: 300,
    idle_timeout_ms: 5000,
    max_connections: 4,
    max_queued: 1024,
    options: {},
    ...overrides,
  };
}

const adapter = () => new GeminiAdapter(config());

runAdapterConformance('gemini', () => ({
  model: 'gemini-2.5-flash',
  adapter,
  wire: () => ({ adapter, mock, reportsCached: true, keyHeader: 'x-goog-api-key' }),
}));

async function failure(promise: Promise<unknown>): Promise<GatewayError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    return err as GatewayError;
  }
  throw new Error('expected the call to fail');
}

async function collect(events: AsyncIterable<string>): Promise<Record<string, any>[]> {
  const out: Record<string, any>[] = [];
  for await (const data of events) out.push(JSON.parse(data) as Record<string, any>);
  return out;
}

describe('gemini adapter on the wire', () => {
  it('posts the translated request to models/{model}:generateContent with the key in x-goog-api-key, never in the URL', async () => {
    await adapter().complete(chatRequest('gw-model', { messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }], max_tokens: 20 }, 'conf-text'), new Cancel());
    const seen = mock.lastRequest();
    expect(seen?.path).toBe('/v1beta/models/conf-text:generateContent');
    expect(seen?.headers['x-goog-api-key']).toBe(PROVIDER_KEY);
    expect(seen?.headers.authorization).toBeUndefined();
    expect(seen?.body).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      generationConfig: { maxOutputTokens: 20 },
    });
  });

  it('streams from :streamGenerateContent?alt=sse, and keeps a path prefix and api_version from the providers file', async () => {
    const prefixed = await startGeminiWireMock();
    try {
      // The mock only answers /v1beta/…: a prefix in base_url must stay in front of it.
      const a = new GeminiAdapter(config({ base_url: `${prefixed.baseUrl}/` }));
      const { events } = await a.stream(chatRequest('gw-model', { stream: true }, 'models/conf-text'), new Cancel());
      await collect(events);
      expect(prefixed.lastRequest()?.path).toBe('/v1beta/models/conf-text:streamGenerateContent?alt=sse');
      const v1 = new GeminiAdapter(config({ base_url: `${prefixed.baseUrl}/proxy`, options: { api_version: 'v1' } }));
      await failure(v1.complete(chatRequest('gw-model', {}, 'conf-text'), new Cancel()));
      expect(prefixed.lastRequest()?.path).toBe('/proxy/v1/models/conf-text:generateContent');
    } finally {
      await prefixed.close();
    }
  });

  it('sends the safety_settings option with every request', async () => {
    const safety = [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }];
    await new GeminiAdapter(config({ options: { safety_settings: safety } })).complete(chatRequest('gw-model', {}, 'conf-text'), new Cancel());
    expect((mock.lastRequest()?.body as { safetySettings?: unknown }).safetySettings).toEqual(safety);
  });

  it('refuses unknown or malformed options at start, naming the provider', () => {
    expect(() => new GeminiAdapter(config({ options: { saftey_settings: [] } }))).toThrow(/provider google: unknown option "saftey_settings"/);
    expect(() => new GeminiAdapter(config({ options: { api_version: '../v1' } }))).toThrow(/provider google: option "api_version"/);
    expect(() => new GeminiAdapter(config({ options: { safety_settings: [{ category: 'X' }] } }))).toThrow(/provider google: option "safety_settings"/);
  });

  it('answers a blocked prompt as content_filter with empty content, streamed or not', async () => {
    const result = await adapter().complete(chatRequest('gw-model', {}, 'gem-blocked'), new Cancel());
    const body = JSON.parse(result.body.toString('utf8'));
    expect(body.choices[0]).toMatchObject({ message: { role: 'assistant', content: '' }, finish_reason: 'content_filter' });
    expect(result.finishReason).toBe('content_filter');
    expect(result.usage).toMatchObject({ input: 9, output: 0 });

    const { meta, events } = await adapter().stream(chatRequest('gw-model', { stream: true, stream_options: { include_usage: true } }, 'gem-blocked'), new Cancel());
    const chunks = await collect(events);
    expect(chunks[0]?.choices[0]).toMatchObject({ delta: { role: 'assistant', content: '' }, finish_reason: 'content_filter' });
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 9, completion_tokens: 0, total_tokens: 9 } });
    expect(meta.finishReason).toBe('content_filter');
  });

  it('returns text and several calls with ids numbered on from the conversation, thinking billed as output', async () => {
    const history = {
      tools: [TOOL],
      messages: [
        { role: 'user', content: 'Weather in Rome?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } }] },
        { role: 'tool', tool_call_id: 'call_0', content: 'sunny' },
        { role: 'user', content: 'And Paris and Oslo?' },
      ],
    };
    const result = await adapter().complete(chatRequest('gw-model', history, 'gem-parallel'), new Cancel());
    const body = JSON.parse(result.body.toString('utf8'));
    expect(body.choices[0].message).toEqual({
      role: 'assistant',
      content: 'Checking both.',
      refusal: null,
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
      ],
    });
    expect(body.choices[0].finish_reason).toBe('tool_calls');
    expect(body.usage).toEqual({ prompt_tokens: 20, completion_tokens: 40, total_tokens: 60, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 30 } });
    expect(result.usage).toEqual({ input: 20, output: 40, cached: 0 });

    const { meta, events } = await adapter().stream(chatRequest('gw-model', { ...history, stream: true }, 'gem-parallel'), new Cancel());
    const chunks = await collect(events);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Checking both.');
    const deltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(deltas).toEqual([
      { index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } },
      { index: 0, function: { arguments: '{"city":"Paris"}' } },
      { index: 1, id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '' } },
      { index: 1, function: { arguments: '{"city":"Oslo"}' } },
    ]);
    expect(chunks.filter((c) => c.choices[0]?.finish_reason).map((c) => c.choices[0].finish_reason)).toEqual(['tool_calls']);
    expect(meta.usage).toEqual({ input: 20, output: 40, cached: 0 });
  });

  it('ends a stream cut by the safety filter with content_filter', async () => {
    const { meta, events } = await adapter().stream(chatRequest('gw-model', { stream: true }, 'gem-safety'), new Cancel());
    const chunks = await collect(events);
    expect(chunks.map((c) => c.choices[0]?.finish_reason).filter(Boolean)).toEqual(['content_filter']);
    expect(meta.finishReason).toBe('content_filter');
  });

  it('fails a stream whose first event is an error as that error status, so an overloaded model fails over', async () => {
    const err = await failure(adapter().stream(chatRequest('gw-model', { stream: true }, 'gem-overloaded'), new Cancel()));
    expect(err).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: true });
    expect(err.message).toContain('overloaded');
  });

  it('keeps a finish reason with no equivalent as stop plus the raw value', async () => {
    const result = await adapter().complete(chatRequest('gw-model', {}, 'gem-other'), new Cancel());
    expect(JSON.parse(result.body.toString('utf8')).choices[0].finish_reason).toBe('stop');
    expect(result.finishReason).toBe('stop');
    expect(result.rawFinishReason).toBe('MALFORMED_FUNCTION_CALL');
  });

  it('takes the wait from RetryInfo when a 429 has no Retry-After', async () => {
    const err = await failure(adapter().complete(chatRequest('gw-model', {}, 'gem-retryinfo'), new Cancel()));
    expect(err.code).toBe('RATE_LIMITED');
    expect(err.retryAfter).toBe(13);
    expect(err.retryable).toBe(true);
  });

  it('maps 403 and a refused key to UPSTREAM_ERROR, not retryable and not blamed on the client', async () => {
    const denied = await failure(adapter().complete(chatRequest('gw-model', {}, 'gem-403'), new Cancel()));
    expect(denied).toMatchObject({ code: 'UPSTREAM_ERROR', status: 502, retryable: false });
    const wrong = await failure(new GeminiAdapter(config({ api_key: 'AIzaSyWrongWrongWrongWrongWrongWrong123' })).complete(chatRequest('gw-model', {}, 'conf-text'), new Cancel()));
    expect(wrong).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: false });
    expect(wrong.message).toContain('API key not valid');
    expect(wrong.message).not.toContain('AIzaSyWrong');
  });

  it("maps a provider's 400 to INVALID_REQUEST for streams too", async () => {
    const err = await failure(adapter().stream(chatRequest('gw-model', { stream: true }, SCENARIOS.status400), new Cancel()));
    expect(err).toMatchObject({ code: 'INVALID_REQUEST', retryable: false });
    expect(err.message).toContain('bad request from provider');
  });

  it('sends what Gemini cannot carry without it (judged at admission), and maps the fields it carries', async () => {
    await adapter().complete(chatRequest('gw-model', { max_tokens: 20, logit_bias: { '50256': -100 }, prediction: { type: 'content', content: 'x' }, verbosity: 'low', seed: 7, foo_bar: 1 }, 'conf-text'), new Cancel());
    expect(mock.lastRequest()?.body).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Tell me something' }] }],
      generationConfig: { maxOutputTokens: 20, seed: 7 },
    });
  });

  it('still refuses a value it cannot map before anything is sent', async () => {
    const before = mock.lastRequest();
    const err = await failure(adapter().complete(chatRequest('gw-model', { seed: 1.5 }, 'conf-text'), new Cancel()));
    expect(err).toMatchObject({ code: 'INVALID_REQUEST', param: 'seed', retryable: false });
    expect(mock.lastRequest()).toBe(before);
  });
});

describe('gemini adapter: embeddings', () => {
  const embed = (upstream: string, body: Record<string, unknown>) => adapter().embed(embeddingsRequest('gw-embed', body, upstream), new Cancel());

  it('posts one request per input to models/{model}:batchEmbedContents, dimensions as outputDimensionality, user not sent', async () => {
    const result = await embed('gemini-embedding-001', { input: ['first', 'second'], dimensions: 3, user: 'u-1' });
    const seen = mock.lastRequest();
    expect(seen?.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
    expect(seen?.headers['x-goog-api-key']).toBe(PROVIDER_KEY);
    expect(seen?.body).toEqual({
      requests: [
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'first' }] }, outputDimensionality: 3 },
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'second' }] }, outputDimensionality: 3 },
      ],
    });
    const answer = parseAnswer(result.body);
    expect(answer).toMatchObject({ object: 'list', model: 'gw-embed' });
    expect(answer.data).toEqual([
      { object: 'embedding', index: 0, embedding: [1 / 16, 2 / 16, 3 / 16] },
      { object: 'embedding', index: 1, embedding: [2 / 16, 4 / 16, 6 / 16] },
    ]);
  });

  it("bills the gateway's estimate, as Gemini sends no token count, and says so in the answer's usage", async () => {
    const result = await embed('models/gemini-embedding-001', { input: 'A sentence to embed.' });
    expect(mock.lastRequest()?.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
    expect(result.usage.input).toBe(estimateEmbeddingsTokens('A sentence to embed.'));
    expect(parseAnswer(result.body).usage).toEqual({ prompt_tokens: result.usage.input, total_tokens: result.usage.input });
    expect(parseAnswer(result.body).data[0]?.embedding).toHaveLength(GEMINI_WIRE_DIMENSIONS);
  });

  it('sends input_type as each request\'s taskType', async () => {
    await embed('gemini-embedding-001', { input: ['what is a gateway?'], input_type: 'search_query' });
    expect(mock.lastRequest()?.body).toEqual({ requests: [{ model: 'models/gemini-embedding-001', content: { parts: [{ text: 'what is a gateway?' }] }, taskType: 'RETRIEVAL_QUERY' }] });
    expect(await failure(embed('gemini-embedding-001', { input: 'a', input_type: 'RETRIEVAL_QUERY' }))).toMatchObject({ code: 'INVALID_REQUEST', param: 'input_type' });
  });

  it('encodes the floats as base64 float32 when the client asks for base64', async () => {
    const answer = parseAnswer((await embed('gemini-embedding-001', { input: ['a'], dimensions: 4, encoding_format: 'base64' })).body);
    expect(answer.data[0]?.embedding).toBe(floatsToBase64([1 / 16, 2 / 16, 3 / 16, 4 / 16]));
  });

  it('refuses token ids before anything is sent, naming input', async () => {
    const before = mock.requests();
    expect(await failure(embed('gemini-embedding-001', { input: [1, 2, 3] }))).toMatchObject({ code: 'INVALID_REQUEST', param: 'input', retryable: false });
    expect(await failure(embed('gemini-embedding-001', { input: [[1], [2]] }))).toMatchObject({ code: 'INVALID_REQUEST', param: 'input' });
    expect(mock.requests()).toBe(before);
  });

  it("maps Google's errors as for generateContent", async () => {
    expect(await failure(embed(SCENARIOS.status400, {}))).toMatchObject({ code: 'INVALID_REQUEST', retryable: false });
    expect(await failure(embed(SCENARIOS.status429, {}))).toMatchObject({ code: 'RATE_LIMITED', retryable: true, retryAfter: 7 });
    expect(await failure(embed(SCENARIOS.status500, {}))).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: true });
    expect(await failure(embed('gem-400-key', {}))).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: false });
  });
});
