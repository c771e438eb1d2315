import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatewayError, type ProviderConfig } from '@gateway/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatRequest, ProviderAdapter } from '../adapter.js';
import { Cancel } from '../cancel.js';
import { chatRequest, runAdapterConformance, SCENARIOS, TOOL } from '../conformance.case.js';
import { floatsToBase64 } from '../embeddings-answer.js';
import { embeddingsRequest, parseAnswer } from '../embeddings-request.case.js';
import { PROVIDER_TYPES } from '../registry.js';
import { VertexAdapter } from './vertex-adapter.js';
import { startVertexWireMock, VERTEX_EMBEDDING_DIMENSIONS, VERTEX_PROJECT, type VertexWireMock } from '../../../test/wire-mocks/vertex-wire-mock.js';

let mock: VertexWireMock;
const dir = mkdtempSync(join(tmpdir(), 'vertex-'));
beforeAll(async () => {
  mock = await startVertexWireMock(dir, { location: 'europe-west4' });
});
afterAll(async () => {
  await mock?.close();
});

function config(overrides: Partial<ProviderConfig> = {}, base = mock): ProviderConfig {
  return {
    name: 'vertex',
    type: 'vertex',
    base_url: base.baseUrl,
    api_key: null,
    models: [{ id: 'gw-model', upstream: 'conf-text', price: null }],
    connect_timeout_ms: 1000,
    timeout_ms: 300,
    idle_timeout_ms: 5000,
    max_connections: 4,
    max_queued: 1024,
    options: {},
    settings: { project: VERTEX_PROJECT, location: 'europe-west4', credentials_file: base.keyFile },
    ...overrides,
  };
}

/** The conformance scenarios are upstream names: on Claude's side they are named with their publisher. */
function onPublisher(adapter: ProviderAdapter, publisher: string): ProviderAdapter {
  const named = (r: ChatRequest): ChatRequest => ({ ...r, upstreamModel: `publishers/${publisher}/models/${r.upstreamModel}` });
  return {
    name: adapter.name,
    type: adapter.type,
    models: adapter.models,
    complete: (r, c) => adapter.complete(named(r), c),
    stream: (r, c) => adapter.stream(named(r), c),
    close: () => adapter.close(),
  };
}

const gemini = () => new VertexAdapter(config());
const claude = () => onPublisher(new VertexAdapter(config()), 'anthropic');

runAdapterConformance('vertex (gemini)', () => ({
  model: 'gemini-2.5-flash',
  adapter: gemini,
  wire: () => ({ adapter: gemini, mock, reportsCached: true, keyHeader: 'authorization', credential: () => mock.lastToken() ?? 'none' }),
}));

runAdapterConformance('vertex (claude)', () => ({
  model: 'claude-sonnet-4-5',
  adapter: claude,
  wire: () => ({ adapter: claude, mock, reportsCached: true, keyHeader: 'authorization', credential: () => mock.lastToken() ?? 'none' }),
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

describe('vertex adapter on the wire', () => {
  it('derives the regional or global endpoint from the location', () => {
    const info = PROVIDER_TYPES.find((t) => t.type === 'vertex');
    expect(info?.defaultBaseUrlFor?.({ location: 'us-central1' })).toBe('https://us-central1-aiplatform.googleapis.com');
    expect(info?.defaultBaseUrlFor?.({ location: 'global' })).toBe('https://aiplatform.googleapis.com');
  });

  it('posts Gemini bodies to publishers/google/models/{model}:generateContent with the bearer token', async () => {
    const a = gemini();
    await a.complete(chatRequest('gw-model', { messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }], max_tokens: 20 }, 'gemini-2.5-flash'), new Cancel());
    const seen = mock.lastRequest();
    expect(seen?.path).toBe(`/v1/projects/${VERTEX_PROJECT}/locations/europe-west4/publishers/google/models/gemini-2.5-flash:generateContent`);
    expect(seen?.headers.authorization).toBe(`Bearer ${mock.lastToken()}`);
    expect(seen?.headers['x-goog-api-key']).toBeUndefined();
    expect(seen?.body).toEqual({ contents: [{ role: 'user', parts: [{ text: 'Hi' }] }], systemInstruction: { parts: [{ text: 'Be brief.' }] }, generationConfig: { maxOutputTokens: 20 } });
    await a.close();
  });

  it('posts Claude models to publishers/anthropic/models/{model}:rawPredict, anthropic_version in the body and no model', async () => {
    const a = new VertexAdapter(config());
    const result = await a.complete(chatRequest('gw-model', { tools: [TOOL], max_tokens: 30 }, 'claude-sonnet-4-5@20250929'), new Cancel());
    expect(result.finishReason).toBe('stop');
    const seen = mock.lastRequest();
    expect(seen?.path).toBe(`/v1/projects/${VERTEX_PROJECT}/locations/europe-west4/publishers/anthropic/models/${encodeURIComponent('claude-sonnet-4-5@20250929')}:rawPredict`);
    expect(seen?.body).toMatchObject({ anthropic_version: 'vertex-2023-10-16', max_tokens: 30 });
    expect((seen?.body as { model?: unknown }).model).toBeUndefined();
    await a.close();
  });

  it('answers an Anthropic Messages request natively, whole and streamed', async () => {
    const a = new VertexAdapter(config());
    const native = { model: 'claude', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] };
    const request = { ...chatRequest('claude', { max_tokens: 16 }, 'claude-conf'), native: { protocol: 'anthropic-messages' as const, body: native } };
    const result = await a.complete({ ...request, upstreamModel: `publishers/anthropic/models/${SCENARIOS.text}` }, new Cancel());
    expect(result.native).toBe(true);
    expect(JSON.parse(result.body.toString('utf8'))).toMatchObject({ type: 'message', role: 'assistant' });
    expect(mock.lastRequest()?.body).toEqual({ max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }], anthropic_version: 'vertex-2023-10-16' });
    const streamed = await a.stream({ ...request, stream: true, native: { protocol: 'anthropic-messages', body: { ...native, stream: true } }, upstreamModel: `publishers/anthropic/models/${SCENARIOS.text}` }, new Cancel());
    expect(streamed.native).toBe(true);
    const frames: string[] = [];
    for await (const frame of streamed.events) frames.push(frame);
    expect(frames[0]).toMatch(/^event: message_start\n/);
    expect(mock.lastRequest()?.path).toMatch(/:streamRawPredict$/);
    await a.close();
  });

  it('uses one token for many requests, and refreshes it ahead of expiry, off the request path', async () => {
    const short = await startVertexWireMock(mkdtempSync(join(tmpdir(), 'vertex-short-')), { location: 'global', tokenLifetimeSeconds: 2 });
    try {
      const a = new VertexAdapter(config({ settings: { project: VERTEX_PROJECT, location: 'global', credentials_file: short.keyFile } }, short));
      for (let i = 0; i < 20; i++) await a.complete(chatRequest('gw-model', {}, 'conf-text'), new Cancel());
      expect(short.issued()).toBe(1);
      // Over three lifetimes the source fetched new tokens by itself; no request was ever refused
      // for an expired token, and requests never waited for one.
      const until = Date.now() + 5_000;
      let requests = 0;
      while (Date.now() < until) {
        await a.complete(chatRequest('gw-model', {}, 'conf-text'), new Cancel());
        requests++;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(short.issued()).toBeGreaterThanOrEqual(3);
      expect(short.issued()).toBeLessThan(requests / 5);
      expect(short.refused()).toBe(0);
      await a.close();
    } finally {
      await short.close();
    }
  });

  it('fails over (retryable 503) when no token can be had, and recovers when the token endpoint does', async () => {
    const down = await startVertexWireMock(mkdtempSync(join(tmpdir(), 'vertex-down-')), { location: 'us-central1' });
    try {
      down.failTokens(500);
      const a = new VertexAdapter(config({ settings: { project: VERTEX_PROJECT, location: 'us-central1', credentials_file: down.keyFile } }, down));
      const err = await failure(a.complete(chatRequest('gw-model', {}, 'conf-text'), new Cancel()));
      expect(err.code).toBe('UNAVAILABLE');
      expect(err.retryable).toBe(true);
      expect(down.requests()).toBe(0);
      down.failTokens(0);
      const ok = await a.complete(chatRequest('gw-model', {}, 'conf-text'), new Cancel());
      expect(ok.finishReason).toBe('stop');
      await a.close();
    } finally {
      await down.close();
    }
  });

  it('refuses a key file that is not a service account key, naming the file and never the key', () => {
    expect(() => new VertexAdapter(config({ settings: { project: VERTEX_PROJECT, location: 'us-central1', credentials_file: join(dir, 'missing.json') } }))).toThrow(/credentials_file .*missing.json cannot be read/);
    expect(() => new VertexAdapter(config({ settings: { project: 'X', location: 'us-central1', credentials_file: mock.keyFile } }))).toThrow(/project/);
  });

  it('runs batches itself with `batch: native` only given the bucket its jobs read and write', async () => {
    const settings = { project: VERTEX_PROJECT, location: 'us-central1', credentials_file: mock.keyFile, batch: 'native' };
    expect(() => new VertexAdapter(config({ settings }))).toThrow(/batch_gcs_uri/);
    expect(() => new VertexAdapter(config({ settings: { ...settings, batch_gcs_uri: 's3://not-google' } }))).toThrow(/gs:\/\/bucket/);
    const native = new VertexAdapter(config({ settings: { ...settings, batch_gcs_uri: 'gs://my-bucket/batches' } }));
    expect(native.batches?.minLines).toBe(1);
    await native.close();
  });

  it('streams a Claude tool call through streamRawPredict as OpenAI chunks', async () => {
    const a = claude();
    const { meta, events } = await a.stream(chatRequest('gw-model', { stream: true, tools: [TOOL] }, SCENARIOS.tools), new Cancel());
    const chunks = await collect(events);
    expect(chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []).length).toBeGreaterThanOrEqual(2);
    expect(meta.finishReason).toBe('tool_calls');
    await a.close();
  });
});

describe('vertex adapter: embeddings', () => {
  const embed = (upstream: string, body: Record<string, unknown>) => new VertexAdapter(config()).embed(embeddingsRequest('gw-embed', body, upstream), new Cancel());
  const predictPath = (model: string) => `/v1/projects/${VERTEX_PROJECT}/locations/europe-west4/publishers/google/models/${model}:predict`;
  const vector = (i: number, dimensions: number) => Array.from({ length: dimensions }, (_, k) => ((i + 1) * (k + 1)) / 16);

  it('posts the inputs as instances to publishers/google/models/{model}:predict with the bearer token, tokens from statistics', async () => {
    const result = await embed('text-embedding-005', { input: ['first text', 'the second text'], dimensions: 3, user: 'u-1' });
    const seen = mock.lastRequest();
    expect(seen?.path).toBe(predictPath('text-embedding-005'));
    expect(seen?.headers.authorization).toBe(`Bearer ${mock.lastToken()}`);
    expect(seen?.body).toEqual({ instances: [{ content: 'first text' }, { content: 'the second text' }], parameters: { outputDimensionality: 3 } });
    const answer = parseAnswer(result.body);
    expect(answer).toMatchObject({ object: 'list', model: 'gw-embed', usage: { prompt_tokens: 5, total_tokens: 5 } });
    expect(answer.data).toEqual([
      { object: 'embedding', index: 0, embedding: vector(0, 3) },
      { object: 'embedding', index: 1, embedding: vector(1, 3) },
    ]);
    expect(result.usage.input).toBe(5);
  });

  it('sends a Gemini embedding model one input a request, and more than 250 inputs in several, in order', async () => {
    const before = mock.requests();
    const one = parseAnswer((await embed('gemini-embedding-001', { input: ['a b', 'c', 'd e f'] })).body);
    expect(mock.requests()).toBe(before + 3);
    expect(mock.lastRequest()?.body).toMatchObject({ instances: [{ content: expect.any(String) }] });
    // Each request held one instance, so each vector is the first of its answer.
    expect(one.data.map((d) => d.embedding)).toEqual([vector(0, VERTEX_EMBEDDING_DIMENSIONS), vector(0, VERTEX_EMBEDDING_DIMENSIONS), vector(0, VERTEX_EMBEDDING_DIMENSIONS)]);
    expect(one.usage.prompt_tokens).toBe(6);

    const texts = Array.from({ length: 260 }, (_, i) => `text ${i}`);
    const many = parseAnswer((await embed('text-embedding-005', { input: texts, dimensions: 1 })).body);
    expect(mock.requests()).toBe(before + 5);
    expect(many.data).toHaveLength(260);
    expect(many.data[249]?.embedding).toEqual(vector(249, 1));
    expect(many.data[250]?.embedding).toEqual(vector(0, 1));
    expect(many.data.map((d) => d.index)).toEqual(texts.map((_, i) => i));
  });

  it('sends input_type as each instance\'s task_type, and refuses one it does not know', async () => {
    await embed('text-embedding-005', { input: ['what is a gateway?', 'second'], input_type: 'search_query' });
    expect(mock.lastRequest()?.body).toEqual({ instances: [{ content: 'what is a gateway?', task_type: 'RETRIEVAL_QUERY' }, { content: 'second', task_type: 'RETRIEVAL_QUERY' }] });
    await embed('text-embedding-005', { input: 'a document', input_type: 'search_document' });
    expect(mock.lastRequest()?.body).toEqual({ instances: [{ content: 'a document', task_type: 'RETRIEVAL_DOCUMENT' }] });
    const before = mock.requests();
    expect(await failure(embed('text-embedding-005', { input: 'a', input_type: 'query' }))).toMatchObject({ code: 'INVALID_REQUEST', param: 'input_type' });
    expect(mock.requests()).toBe(before);
  });

  it('encodes the floats as base64 float32 when the client asks for base64', async () => {
    const answer = parseAnswer((await embed('text-embedding-005', { input: 'a', dimensions: 4, encoding_format: 'base64' })).body);
    expect(answer.data[0]?.embedding).toBe(floatsToBase64(vector(0, 4)));
  });

  it('refuses token ids, and a Claude model, before anything is sent', async () => {
    const before = mock.requests();
    expect(await failure(embed('text-embedding-005', { input: [1, 2, 3] }))).toMatchObject({ code: 'INVALID_REQUEST', param: 'input', retryable: false });
    expect(await failure(embed('claude-sonnet-4-5', { input: 'a' }))).toMatchObject({ code: 'INVALID_REQUEST', param: 'model' });
    expect(mock.requests()).toBe(before);
  });

  it("maps Vertex's errors as for generateContent", async () => {
    expect(await failure(embed('predict-429', { input: 'a' }))).toMatchObject({ code: 'RATE_LIMITED', retryable: true });
  });
});
