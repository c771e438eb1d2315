import { GatewayError, type ProviderConfig } from '@gateway/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningWireMock } from '../../../../test-support/wire-mock.js';
import { Cancel } from '../cancel.js';
import { chatRequest, PROVIDER_KEY, runAdapterConformance } from '../conformance.case.js';
import { estimateEmbeddingsTokens } from '../../policy/embeddings-estimate.js';
import { floatsToBase64 } from '../embeddings-answer.js';
import { embeddingsRequest, parseAnswer } from '../embeddings-request.case.js';
import { OpenAiAdapter } from './openai-adapter.js';
import { WIRE_TOKENS_PER_INPUT, wireVector } from '../../../test/wire-mocks/openai-embeddings-wire.js';
import { startOpenAiWireMock } from '../../../test/wire-mocks/openai-wire-mock.js';

let mock: RunningWireMock;
beforeAll(async () => {
  mock = await startOpenAiWireMock();
});
afterAll(async () => {
  await mock?.close();
});

const config = (options: Record<string, unknown> = {}): ProviderConfig => ({
  name: 'upstream',
  type: 'openai',
  base_url: `${mock.baseUrl}/v1`,
  api_key: PROVIDER_KEY,
  models: [{ id: 'gw-model', upstream: 'conf-text', price: null }],
  connect_timeout_ms: 1000,
  timeout_ms: 300,
  idle_timeout_ms: 5000,
  max_connections: 4,
  max_queued: 1024,
  options,
});

const adapter = () => new OpenAiAdapter(config());

runAdapterConformance('openai', () => ({
  model: 'gpt-4o-mini',
  adapter,
  wire: () => ({ adapter, mock, reportsCached: true, keyHeader: 'authorization' }),
}));

/** The body the mock received for one completion. */
async function sent(upstream: string, body: Record<string, unknown>, options: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const openai = new OpenAiAdapter(config(options));
  try {
    await openai.complete(chatRequest('gw-model', body, upstream), new Cancel());
  } finally {
    await openai.close();
  }
  return mock.lastRequest()?.body as Record<string, unknown>;
}

async function refusal(promise: Promise<unknown>): Promise<GatewayError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(GatewayError);
  return err as GatewayError;
}

describe('openai adapter: the token limit field', () => {
  it('sends a reasoning model max_completion_tokens in place of max_tokens, never both', async () => {
    for (const model of ['o1', 'o3-mini', 'o4-mini', 'gpt-5', 'gpt-5-mini', 'gpt-5.1']) {
      const body = await sent(model, { max_tokens: 50 });
      expect(body.max_completion_tokens).toBe(50);
      expect('max_tokens' in body).toBe(false);
    }
  });

  it('keeps max_completion_tokens when the client sent both, as the project cap was checked on it', async () => {
    const body = await sent('o3', { max_tokens: 500, max_completion_tokens: 40 });
    expect(body).toMatchObject({ max_completion_tokens: 40 });
    expect('max_tokens' in body).toBe(false);
  });

  it('forwards the client bytes of other models as they came', async () => {
    const request = chatRequest('gpt-4o-mini', { max_tokens: 50 });
    await new OpenAiAdapter(config()).complete(request, new Cancel());
    expect(mock.lastRequest()?.body).toEqual(JSON.parse(request.raw.toString('utf8')));
    expect(await sent('gpt-4o', { max_completion_tokens: 60 })).toMatchObject({ max_completion_tokens: 60 });
  });

  it('follows options.max_tokens_field whatever the model is named', async () => {
    const renamed = await sent('my-reasoner', { max_tokens: 30 }, { max_tokens_field: 'max_completion_tokens' });
    expect(renamed.max_completion_tokens).toBe(30);
    expect('max_tokens' in renamed).toBe(false);
    const older = await sent('conf-text', { max_completion_tokens: 30 }, { max_tokens_field: 'max_tokens' });
    expect(older.max_tokens).toBe(30);
    expect('max_completion_tokens' in older).toBe(false);
  });

  it("passes the provider's refusal of max_tokens or temperature on as INVALID_REQUEST with its param", async () => {
    const forced = await refusal(new OpenAiAdapter(config({ max_tokens_field: 'max_tokens' })).complete(chatRequest('gw-model', { max_completion_tokens: 30 }, 'o4-mini'), new Cancel()));
    expect(forced).toMatchObject({ code: 'INVALID_REQUEST', param: 'max_tokens', retryable: false });
    const hot = await refusal(new OpenAiAdapter(config()).complete(chatRequest('gw-model', { temperature: 0.2 }, 'o4-mini'), new Cancel()));
    expect(hot).toMatchObject({ code: 'INVALID_REQUEST', param: 'temperature', retryable: false });
    expect(hot.message).toContain('Only the default (1) value is supported');
  });

  it('renames the field in streams too', async () => {
    const { events } = await new OpenAiAdapter(config()).stream(chatRequest('gw-model', { stream: true, max_tokens: 20 }, 'o3'), new Cancel());
    for await (const _ of events);
    const body = mock.lastRequest()?.body as Record<string, unknown>;
    expect(body).toMatchObject({ max_completion_tokens: 20, stream_options: { include_usage: true } });
    expect('max_tokens' in body).toBe(false);
  });
});

describe('openai adapter: options', () => {
  it('refuses an unknown option or a bad max_tokens_field, naming the provider and the option', () => {
    expect(() => new OpenAiAdapter(config({ max_token_field: 'max_tokens' }))).toThrow(/provider upstream: unknown option options\.max_token_field/);
    expect(() => new OpenAiAdapter(config({ max_tokens_field: 'max_output_tokens' }))).toThrow(/provider upstream: options\.max_tokens_field must be one of max_tokens, max_completion_tokens/);
  });
});

describe('openai adapter: embeddings', () => {
  const embed = (upstream: string, body: Record<string, unknown>, model = 'gw-embed') => new OpenAiAdapter(config()).embed(embeddingsRequest(model, body, upstream), new Cancel());

  it('posts the client bytes to {base_url}/embeddings with the provider key, and answers with the client model id', async () => {
    const request = embeddingsRequest('text-embedding-3-small', { input: ['one', 'two'], dimensions: 3, user: 'u-1' });
    const result = await new OpenAiAdapter(config()).embed(request, new Cancel());
    const seen = mock.lastRequest();
    expect(seen?.path).toBe('/v1/embeddings');
    expect(seen?.headers.authorization).toBe(`Bearer ${PROVIDER_KEY}`);
    expect(seen?.body).toEqual(JSON.parse(request.raw.toString('utf8')));
    const answer = parseAnswer(result.body);
    expect(answer).toEqual({
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: wireVector(0, 3) },
        { object: 'embedding', index: 1, embedding: wireVector(1, 3) },
      ],
      model: 'text-embedding-3-small',
      usage: { prompt_tokens: 2 * WIRE_TOKENS_PER_INPUT, total_tokens: 2 * WIRE_TOKENS_PER_INPUT },
    });
    expect(result.usage).toEqual({ input: 2 * WIRE_TOKENS_PER_INPUT });
  });

  it("names the provider's model upstream and the client's in the answer", async () => {
    const result = await embed('text-embedding-3-large', { input: 'x' });
    expect((mock.lastRequest()?.body as { model: string }).model).toBe('text-embedding-3-large');
    expect(parseAnswer(result.body).model).toBe('gw-embed');
  });

  it("keeps the provider's base64, and encodes floats as float32 little endian when a server ignored encoding_format", async () => {
    const native = parseAnswer((await embed('text-embedding-3-small', { input: ['a', 'b'], encoding_format: 'base64' })).body);
    expect(native.data.map((d) => d.embedding)).toEqual([floatsToBase64(wireVector(0)), floatsToBase64(wireVector(1))]);
    const encoded = parseAnswer((await embed('emb-floats-only', { input: ['a', 'b'], encoding_format: 'base64' })).body);
    expect(encoded.data.map((d) => d.embedding)).toEqual(native.data.map((d) => d.embedding));
    // 1/16, 2/16, 3/16, 4/16 as float32 little endian.
    expect(Buffer.from(encoded.data[0]!.embedding as string, 'base64')).toEqual(Buffer.from([0, 0, 0x80, 0x3d, 0, 0, 0, 0x3e, 0, 0, 0x40, 0x3e, 0, 0, 0x80, 0x3e]));
  });

  it('forwards token ids', async () => {
    const result = await embed('text-embedding-3-small', { input: [[1, 2, 3], [4]] });
    expect((mock.lastRequest()?.body as { input: unknown }).input).toEqual([[1, 2, 3], [4]]);
    expect(parseAnswer(result.body).data).toHaveLength(2);
  });

  it("bills the gateway's estimate when a compatible server sends no usage", async () => {
    const result = await embed('emb-no-usage', { input: ['hello world'] });
    expect(result.usage.input).toBe(estimateEmbeddingsTokens(['hello world']));
    expect(parseAnswer(result.body).usage).toEqual({ prompt_tokens: result.usage.input, total_tokens: result.usage.input });
  });

  it("passes the provider's refusals and failures on in the gateway's classes", async () => {
    expect(await refusal(embed('text-embedding-ada-002', { dimensions: 256 }))).toMatchObject({ code: 'INVALID_REQUEST', status: 400, retryable: false });
    expect(await refusal(embed('conf-400', {}))).toMatchObject({ code: 'INVALID_REQUEST', retryable: false });
    expect(await refusal(embed('conf-429', {}))).toMatchObject({ code: 'RATE_LIMITED', retryable: true, retryAfter: 7 });
    expect(await refusal(embed('conf-500', {}))).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: true });
    expect(await refusal(embed('conf-slow', {}))).toMatchObject({ code: 'UPSTREAM_TIMEOUT', retryable: true });
  });

  it('refuses an answer without one embedding per input', async () => {
    const broken = await refusal(embed('emb-short', { input: ['a', 'b'] }));
    expect(broken).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: false });
    expect(broken.message).toContain('1 embeddings for 2 inputs');
  });
});
