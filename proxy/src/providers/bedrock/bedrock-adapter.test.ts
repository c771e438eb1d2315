import { GatewayError, type ProviderConfig } from '@gateway/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cancel } from '../cancel.js';
import { floatsToBase64 } from '../embeddings-answer.js';
import { embeddingsRequest, parseAnswer } from '../embeddings-request.case.js';
import { chatRequest, PROVIDER_KEY, runAdapterConformance, SCENARIOS, TOOL } from '../conformance.case.js';
import { estimateEmbeddingsTokens } from '../../policy/embeddings-estimate.js';
import { createAdapter, PROVIDER_TYPES } from '../registry.js';
import { BedrockAdapter } from './bedrock-adapter.js';
import { startBedrockWireMock, type BedrockWireMock } from '../../../test/wire-mocks/bedrock-wire-mock.js';

const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
const SESSION = 'FwoGZXIvYXdzEXAMPLE-session-token';
const API_KEY = 'ABSKQmVkcm9ja0FQSUtleS1leGFtcGxlLWtleQ==';

let mock: BedrockWireMock;
beforeAll(async () => {
  mock = await startBedrockWireMock({ region: 'eu-west-3', accessKeyId: PROVIDER_KEY, secretAccessKey: SECRET, sessionToken: SESSION, apiKey: API_KEY });
});
afterAll(async () => {
  await mock?.close();
});

function config(overrides: Partial<ProviderConfig> = {}, settings: Record<string, string> = {}, keyPair = true): ProviderConfig {
  return {
    name: 'aws',
    type: 'bedrock',
    base_url: mock.baseUrl,
    api_key: null,
    models: [{ id: 'gw-model', upstream: 'conf-text', price: null }],
    connect_timeout_ms: 1000,
    timeout_ms: 300,
    idle_timeout_ms: 5000,
    max_connections: 4,
    max_queued: 1024,
    options: {},
    settings: keyPair ? { region: 'eu-west-3', aws_access_key_id: PROVIDER_KEY, aws_secret_access_key: SECRET, aws_session_token: SESSION, ...settings } : { region: 'eu-west-3', ...settings },
    ...overrides,
  };
}

const adapter = () => new BedrockAdapter(config());
/** The same provider with a Bedrock API key in place of the access key pair. */
const keyed = () => new BedrockAdapter(config({ api_key: API_KEY }, {}, false));

runAdapterConformance('bedrock', () => ({
  model: 'anthropic.claude-sonnet-4-5',
  adapter,
  wire: () => ({ adapter, mock, reportsCached: true, keyHeader: 'authorization' }),
}));

runAdapterConformance('bedrock with an API key', () => ({
  model: 'anthropic.claude-sonnet-4-5',
  adapter: keyed,
  wire: () => ({ adapter: keyed, mock, reportsCached: true, keyHeader: 'authorization', credential: () => `Bearer ${API_KEY}` }),
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

describe('bedrock adapter on the wire', () => {
  it('is a registered type whose base_url derives from the region', () => {
    const info = PROVIDER_TYPES.find((t) => t.type === 'bedrock');
    expect(info?.defaultBaseUrlFor?.({ region: 'us-east-1' })).toBe('https://bedrock-runtime.us-east-1.amazonaws.com');
    expect(createAdapter(config()).type).toBe('bedrock');
    expect(() => new BedrockAdapter(config({}, { region: 'Paris' }))).toThrow(/region/);
  });

  it('runs batches itself with `batch: native` only given what batch inference needs: a key pair, the service role, the bucket', async () => {
    const batch = { batch: 'native', batch_role_arn: 'arn:aws:iam::123456789012:role/Batch', batch_s3_uri: 's3://my-bucket/jobs' };
    const native = new BedrockAdapter(config({}, batch));
    expect(native.batches?.minLines).toBe(100);
    expect(new BedrockAdapter(config({}, { ...batch, batch_min_records: '1000' })).batches?.minLines).toBe(1000);
    expect(new BedrockAdapter(config()).batches).toBeUndefined();
    expect(() => new BedrockAdapter(config({ api_key: API_KEY }, batch, false))).toThrow(/S3 takes no Bedrock API key/);
    expect(() => new BedrockAdapter(config({}, { ...batch, batch_role_arn: 'GatewayRole' }))).toThrow(/batch_role_arn/);
    expect(() => new BedrockAdapter(config({}, { ...batch, batch_s3_uri: 'https://my-bucket.s3.amazonaws.com' }))).toThrow(/batch_s3_uri/);
    expect(() => new BedrockAdapter(config({}, { ...batch, batch_min_records: '0' }))).toThrow(/batch_min_records/);
    expect(() => new BedrockAdapter(config({}, { batch: 'sometimes' }))).toThrow(/native or gateway/);
    await native.close();
  });

  it('signs every request (verified by the mock) and sends the Converse body, the model only in the path', async () => {
    const before = mock.verified();
    await adapter().complete(
      chatRequest('gw-model', { messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }], max_tokens: 20, temperature: 1.5, top_p: 0.9, stop: 'END' }, 'conf-text'),
      new Cancel(),
    );
    expect(mock.verified()).toBe(before + 1);
    const seen = mock.lastRequest();
    expect(seen?.path).toBe('/model/conf-text/converse');
    expect(seen?.headers['x-amz-security-token']).toBe(SESSION);
    expect(JSON.stringify(seen)).not.toContain(SECRET);
    expect(seen?.body).toEqual({
      messages: [{ role: 'user', content: [{ text: 'Hi' }] }],
      system: [{ text: 'Be brief.' }],
      inferenceConfig: { maxTokens: 20, temperature: 1, topP: 0.9, stopSequences: ['END'] },
    });
  });

  it('URL-encodes an inference-profile ARN into the path, and the signature still holds', async () => {
    const arn = 'arn:aws:bedrock:eu-west-3:123456789012:inference-profile/eu.anthropic.claude-sonnet-4-5-20250929-v1:0';
    const a = new BedrockAdapter(config({ models: [{ id: 'claude', upstream: arn, price: null }] }));
    const result = await a.complete(chatRequest('claude', {}, arn), new Cancel());
    expect(result.finishReason).toBe('stop');
    expect(mock.lastRequest()?.path).toBe(`/model/${encodeURIComponent(arn)}/converse`);
    const { events } = await a.stream(chatRequest('claude', { stream: true }, arn), new Cancel());
    expect((await collect(events)).length).toBeGreaterThan(2);
  });

  it('is refused by Bedrock with a wrong secret: 502, not retried, no secret in the message', async () => {
    const err = await failure(new BedrockAdapter(config({}, { aws_secret_access_key: 'not-the-secret' })).complete(chatRequest('gw-model', {}, 'conf-text'), new Cancel()));
    expect(err.code).toBe('UPSTREAM_ERROR');
    expect(err.retryable).toBe(false);
    expect(err.message).toContain('signature');
    expect(err.message).not.toContain('not-the-secret');
  });

  it('sends a Bedrock API key as a bearer token, with no signature, on both operations', async () => {
    const before = mock.verified();
    await keyed().complete(chatRequest('gw-model', {}, 'conf-text'), new Cancel());
    const seen = mock.lastRequest();
    expect(seen?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(seen?.headers['x-amz-date']).toBeUndefined();
    expect(seen?.headers['x-amz-security-token']).toBeUndefined();
    const { events } = await keyed().stream(chatRequest('gw-model', { stream: true }, 'conf-text'), new Cancel());
    expect((await collect(events)).length).toBeGreaterThan(2);
    expect(mock.lastRequest()?.path).toBe('/model/conf-text/converse-stream');
    expect(mock.verified()).toBe(before + 2);
  });

  it('is refused by Bedrock with a wrong API key: 502, not retried, no key in the message', async () => {
    const err = await failure(new BedrockAdapter(config({ api_key: 'ABSK-not-the-key' }, {}, false)).complete(chatRequest('gw-model', {}, 'conf-text'), new Cancel()));
    expect(err.code).toBe('UPSTREAM_ERROR');
    expect(err.retryable).toBe(false);
    expect(err.message).not.toContain('ABSK-not-the-key');
  });

  it('takes one kind of credentials: an API key or the access key pair, not both and not neither', () => {
    const refusal = (make: () => unknown): string => {
      try {
        make();
      } catch (err) {
        return String(err);
      }
      return 'accepted';
    };
    const both = refusal(() => new BedrockAdapter(config({ api_key: API_KEY })));
    expect(both).toMatch(/either "api_key".*not both/);
    expect(refusal(() => new BedrockAdapter(config({ api_key: API_KEY }, { aws_session_token: SESSION }, false)))).toMatch(/not both/);
    expect(refusal(() => new BedrockAdapter(config({}, {}, false)))).toMatch(/"aws_access_key_id" and "aws_secret_access_key" are required, or "api_key"/);
    const half = refusal(() => new BedrockAdapter(config({}, { aws_secret_access_key: SECRET }, false)));
    expect(half).toMatch(/required/);
    for (const message of [both, half]) {
      expect(message).not.toContain(API_KEY);
      expect(message).not.toContain(SECRET);
    }
  });

  it('translates images, tool calls and tool results both ways', async () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    await adapter().complete(
      chatRequest('gw-model', {
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Weather here?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }] },
          { role: 'assistant', content: null, tool_calls: [{ id: 'tooluse_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
          { role: 'tool', tool_call_id: 'tooluse_1', content: '21 °C' },
        ],
        tools: [TOOL],
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
      }, 'conf-text'),
      new Cancel(),
    );
    expect(mock.lastRequest()?.body).toEqual({
      messages: [
        { role: 'user', content: [{ text: 'Weather here?' }, { image: { format: 'png', source: { bytes: png } } }] },
        { role: 'assistant', content: [{ toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { city: 'Paris' } } }] },
        { role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_1', content: [{ text: '21 °C' }] } }] },
      ],
      toolConfig: { tools: [{ toolSpec: { name: 'get_weather', description: 'Weather in a city', inputSchema: { json: TOOL.function.parameters } } }], toolChoice: { tool: { name: 'get_weather' } } },
    });
  });

  it('sends what Converse cannot carry without it (judged at admission), and still refuses an image URL before sending anything', async () => {
    await adapter().complete(chatRequest('gw-model', { max_tokens: 20, seed: 7, presence_penalty: 0.5, logit_bias: { '50256': -100 }, reasoning_effort: 'high', foo_bar: 1 }, 'conf-text'), new Cancel());
    expect(mock.lastRequest()?.body).toEqual({
      messages: [{ role: 'user', content: [{ text: 'Tell me something' }] }],
      inferenceConfig: { maxTokens: 20 },
    });
    const before = mock.requests();
    const url = await failure(adapter().complete(chatRequest('gw-model', { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }] }, 'conf-text'), new Cancel()));
    expect(url.code).toBe('INVALID_REQUEST');
    expect(url.param).toBe('messages[0].content[0].image_url.url');
    expect(mock.requests()).toBe(before);
  });

  it('counts cache reads as cached input and cache writes apart, whole and streamed, with parallel tool calls', async () => {
    const whole = await adapter().complete(chatRequest('gw-model', { tools: [TOOL] }, 'bedrock-parallel'), new Cancel());
    expect(whole.usage).toEqual({ input: 110, output: 20, cached: 60, cacheWrite: 40 });
    const body = JSON.parse(whole.body.toString('utf8'));
    expect(body.choices[0].message.content).toBe('Checking both.');
    expect(body.choices[0].message.tool_calls.map((c: any) => [c.id, JSON.parse(c.function.arguments).city])).toEqual([['tooluse_a', 'Paris'], ['tooluse_b', 'Oslo']]);
    expect(body.usage).toMatchObject({ prompt_tokens: 110, prompt_tokens_details: { cached_tokens: 60 } });
    const { meta, events } = await adapter().stream(chatRequest('gw-model', { stream: true, tools: [TOOL] }, 'bedrock-parallel'), new Cancel());
    const chunks = await collect(events);
    const deltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(deltas.filter((d: any) => d.id).map((d: any) => [d.index, d.id])).toEqual([[0, 'tooluse_a'], [1, 'tooluse_b']]);
    expect(meta.usage).toEqual({ input: 110, output: 20, cached: 60, cacheWrite: 40 });
    expect(meta.finishReason).toBe('tool_calls');
  });

  it('maps ServiceUnavailableException to a retryable 503, and a throttled stream to a retryable 429 before it starts', async () => {
    const err = await failure(adapter().complete(chatRequest('gw-model', {}, 'bedrock-unavailable'), new Cancel()));
    expect(err.code).toBe('UNAVAILABLE');
    expect(err.status).toBe(503);
    expect(err.retryable).toBe(true);
    const throttled = await failure(adapter().stream(chatRequest('gw-model', { stream: true }, 'bedrock-throttled'), new Cancel()));
    expect(throttled.code).toBe('RATE_LIMITED');
    expect(throttled.retryable).toBe(true);
  });

  for (const scenario of ['bedrock-corrupt', 'bedrock-truncated']) {
    it(`ends a broken event stream (${scenario}) with one clean UPSTREAM_ERROR, keeping what streamed`, async () => {
      const { meta, events } = await adapter().stream(chatRequest('gw-model', { stream: true }, scenario), new Cancel());
      const seen: string[] = [];
      const err = await failure(
        (async () => {
          for await (const data of events) seen.push(data);
        })(),
      );
      expect(err.code).toBe('UPSTREAM_ERROR');
      expect(err.message).toMatch(/corrupt event stream|before it was complete/);
      expect(seen.map((s) => JSON.parse(s).choices[0].delta.content ?? '').join('')).toBe('Hello');
      expect(meta.estimatedOutput).toBeGreaterThan(0);
      expect(meta.usage).toBeNull();
    });
  }
});

describe('bedrock request', () => {
  it('refuses tool_choice of an unknown shape and drops tools for "none"', async () => {
    const err = await failure(adapter().complete(chatRequest('gw-model', { tools: [TOOL], tool_choice: { type: 'allowed_tools' } }, 'conf-text'), new Cancel()));
    expect(err.param).toBe('tool_choice');
    await adapter().complete(chatRequest('gw-model', { tools: [TOOL], tool_choice: 'none' }, 'conf-text'), new Cancel());
    expect((mock.lastRequest()?.body as { toolConfig?: unknown }).toolConfig).toBeUndefined();
    expect(SCENARIOS.text).toBe('conf-text');
  });
});

describe('bedrock adapter: embeddings through InvokeModel', () => {
  const embed = (upstream: string, body: Record<string, unknown>, make = adapter) => make().embed(embeddingsRequest('gw-embed', body, upstream), new Cancel());
  const vector = (text: string, dimensions: number) => Array.from({ length: dimensions }, (_, k) => ((k + 1) * text.length) / 16);

  it('sends a Titan model one signed request per text, vectors in input order, token counts summed', async () => {
    const before = mock.verified();
    const texts = ['a', 'two words', 'three words here', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];
    const result = await embed('amazon.titan-embed-text-v2:0', { input: texts, dimensions: 256, user: 'u-1' });
    expect(mock.verified()).toBe(before + texts.length);
    expect(mock.lastRequest()?.path).toBe('/model/amazon.titan-embed-text-v2%3A0/invoke');
    expect(mock.lastRequest()?.body).toEqual({ inputText: expect.any(String), dimensions: 256 });
    const answer = parseAnswer(result.body);
    expect(answer.data.map((d) => d.embedding)).toEqual(texts.map((t) => vector(t, 256)));
    expect(answer.data.map((d) => d.index)).toEqual(texts.map((_, i) => i));
    expect(result.usage.input).toBe(1 + 2 + 3 + 7);
    expect(answer.usage).toEqual({ prompt_tokens: 13, total_tokens: 13 });
  });

  it('sends a Cohere model up to 96 texts a request, input_type search_document, billed at the estimate', async () => {
    const before = mock.verified();
    const texts = Array.from({ length: 100 }, (_, i) => `text number ${i}`);
    const result = await embed('cohere.embed-english-v3', { input: texts });
    expect(mock.verified()).toBe(before + 2);
    expect(mock.lastRequest()?.body).toEqual({ texts: texts.slice(96), input_type: 'search_document' });
    const answer = parseAnswer(result.body);
    expect(answer.data).toHaveLength(100);
    expect(answer.data[99]?.embedding).toEqual(vector(texts[99] as string, 1024));
    expect(result.usage.input).toBe(estimateEmbeddingsTokens(texts));
    await embed('us.cohere.embed-v4:0', { input: 'short', dimensions: 256 }, keyed);
    expect(mock.lastRequest()?.body).toEqual({ texts: ['short'], input_type: 'search_document', output_dimension: 256 });
  });

  it('sends a Cohere model the client\'s input_type, and a Titan model none', async () => {
    await embed('cohere.embed-multilingual-v3', { input: ['where is it?'], input_type: 'search_query' });
    expect(mock.lastRequest()?.body).toEqual({ texts: ['where is it?'], input_type: 'search_query' });
    await embed('amazon.titan-embed-text-v2:0', { input: 'where is it?', input_type: 'search_query' });
    expect(mock.lastRequest()?.body).toEqual({ inputText: 'where is it?' });
    expect(await failure(embed('cohere.embed-english-v3', { input: 'a', input_type: 'search' }))).toMatchObject({ code: 'INVALID_REQUEST', param: 'input_type' });
  });

  it('encodes the floats as base64 when asked', async () => {
    const answer = parseAnswer((await embed('amazon.titan-embed-text-v2:0', { input: 'abcd', dimensions: 256, encoding_format: 'base64' })).body);
    expect(answer.data[0]?.embedding).toBe(floatsToBase64(vector('abcd', 256)));
  });

  it('refuses token ids and a model that is no embedding model before anything is sent', async () => {
    const before = mock.requests();
    expect(await failure(embed('amazon.titan-embed-text-v2:0', { input: [1, 2] }))).toMatchObject({ code: 'INVALID_REQUEST', param: 'input' });
    expect(await failure(embed('anthropic.claude-sonnet-4-5', { input: 'a' }))).toMatchObject({ code: 'INVALID_REQUEST', param: 'model' });
    expect(mock.requests()).toBe(before);
  });

  it("passes Bedrock's refusal of a body on, and maps its throttling as for Converse", async () => {
    expect(await failure(embed('amazon.titan-embed-text-v2:0', { input: 'a', dimensions: 7 }))).toMatchObject({ code: 'INVALID_REQUEST', retryable: false });
    expect(await failure(embed('amazon.titan-embed-text-throttled', { input: ['a', 'b'] }))).toMatchObject({ code: 'RATE_LIMITED', retryable: true, retryAfter: 7 });
  });
});
