import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeProjectPolicy, NO_RATE_LIMITS, type AuditEvent, type ProjectPolicy, type UsageRecord } from '@gateway/shared';
import { eventually } from '../../test-support/processes.js';
import { deleteTestKey, projectTestKey, type TestKey } from '../../test-support/redis.js';
import type { RunningWireMock } from '../../test-support/wire-mock.js';
import { estimateEmbeddingsTokens } from '../src/policy/embeddings-estimate.js';
import { countTokens } from '../src/providers/mock/mock-tokens.js';
import { mockVector } from '../src/providers/mock/mock-embeddings.js';
import { WIRE_TOKENS_PER_INPUT, wireVector } from './wire-mocks/openai-embeddings-wire.js';
import { startOpenAiWireMock } from './wire-mocks/openai-wire-mock.js';
import { startGeminiWireMock } from './wire-mocks/gemini-wire-mock.js';
import { startHarness, type Harness } from './harness.js';

/**
 * POST /v1/embeddings end to end: the official openai SDK, unmodified, against a real proxy serving
 * the built-in mock provider and openai-typed providers on OpenAI's wire format (steered by the
 * upstream model name, test/wire-mocks/openai-embeddings-wire.ts), with the chat path's guarantees: failover,
 * provider errors, project policy, quota, revocation in flight, and one audit event and one usage
 * record per request.
 */
let first: RunningWireMock;
let second: RunningWireMock;
let google: RunningWireMock;
let h: Harness;
let key: TestKey;
let client: OpenAI;

beforeAll(async () => {
  first = await startOpenAiWireMock();
  second = await startOpenAiWireMock();
  google = await startGeminiWireMock();
  h = await startHarness(
    'embeddings',
    `providers:
  - name: claude
    type: anthropic
    api_key: sk-ant-provider-secret-0000
    models: [chat-only, mixed]
  - name: builtin
    type: mock
    models: [mock-embed, mixed, { id: priced-embed, upstream: mock-embed, price: { input: 2, output: 8, cached_input: 1 } }]
  - name: first
    type: openai
    base_url: ${first.baseUrl}/v1
    api_key: sk-first-provider-secret
    models: [{ id: wire-embed, upstream: text-embedding-3-small }, { id: emb-failover, upstream: conf-500 }, { id: emb-ada, upstream: text-embedding-ada-002 }, { id: emb-slow, upstream: conf-slow }]
  - name: second
    type: openai
    base_url: ${second.baseUrl}/v1
    api_key: sk-second-provider-secret
    models: [{ id: emb-failover, upstream: text-embedding-3-small }]
  - name: google
    type: gemini
    base_url: ${google.baseUrl}
    api_key: google-provider-secret-key
    models: [{ id: gem-embed, upstream: gemini-embedding-001 }]
`,
  );
  key = await projectTestKey(h.redis, h.keys);
  client = new OpenAI({ apiKey: key.key, baseURL: `${h.url}/v1`, maxRetries: 0 });
});

afterAll(async () => {
  await h?.stop();
  await first?.close();
  await second?.close();
  await google?.close();
});

async function recordsOf(requestId: string): Promise<{ audit: AuditEvent[]; usage: UsageRecord[] }> {
  const { audit, usage } = await h.records();
  return { audit: audit.filter((a) => a.request_id === requestId), usage: usage.filter((u) => u.request_id === requestId) };
}

function post(body: unknown, apiKey = key.key): Promise<Response> {
  return fetch(`${h.url}/v1/embeddings`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function refused(res: Response, status: number, code: string, param?: string): Promise<string> {
  expect(res.status).toBe(status);
  const body = (await res.json()) as { error: { code: string; param: string | null; type: string; message: string } };
  expect(body.error.code).toBe(code);
  if (param !== undefined) expect(body.error.param).toBe(param);
  return res.headers.get('x-request-id') as string;
}

describe('embeddings through the official openai SDK', () => {
  it('embeds a string with the mock provider: the SDK asks for base64 and decodes it to the same floats', async () => {
    const { data, response } = await client.embeddings.create({ model: 'mock-embed', input: 'The quick brown fox' }).withResponse();
    expect(data.object).toBe('list');
    expect(data.model).toBe('mock-embed');
    expect(data.data).toHaveLength(1);
    expect(data.data[0]).toMatchObject({ object: 'embedding', index: 0 });
    expect(data.data[0]!.embedding).toEqual(mockVector('The quick brown fox', 8));
    const tokens = countTokens('The quick brown fox');
    expect(data.usage).toEqual({ prompt_tokens: tokens, total_tokens: tokens });

    const { audit, usage } = await recordsOf(response.headers.get('x-request-id') as string);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ outcome: 'success', status: 200, endpoint: 'embeddings', model: 'mock-embed', provider: 'builtin', attempts: 1 });
    expect(usage).toHaveLength(1);
    expect(usage[0]).toMatchObject({ endpoint: 'embeddings', provider: 'builtin', model: 'mock-embed', stream: false, finish_reason: 'stop', tokens: { input: tokens, output: 0, total: tokens, cached: 0 }, cost_usd: null });
  });

  it('embeds an array, in order, as floats or as base64 when asked, with dimensions', async () => {
    const input = ['alpha', 'beta', 'gamma'];
    const floats = await client.embeddings.create({ model: 'mock-embed', input, encoding_format: 'float', dimensions: 5 });
    expect(floats.data.map((d) => d.index)).toEqual([0, 1, 2]);
    expect(floats.data.map((d) => d.embedding)).toEqual(input.map((text) => mockVector(text, 5)));
    const decoded = await client.embeddings.create({ model: 'mock-embed', input, dimensions: 5 });
    expect(decoded.data.map((d) => d.embedding)).toEqual(floats.data.map((d) => d.embedding));
    // Asked explicitly, base64 reaches the client as the string OpenAI would send.
    const raw = await client.embeddings.create({ model: 'mock-embed', input, encoding_format: 'base64', dimensions: 5 });
    for (const [i, d] of raw.data.entries()) {
      expect(typeof d.embedding).toBe('string');
      const bytes = Buffer.from(d.embedding as unknown as string, 'base64');
      expect(Array.from({ length: 5 }, (_, j) => bytes.readFloatLE(j * 4))).toEqual(mockVector(input[i]!, 5));
    }
  });

  it('embeds through an openai-typed provider, naming the client model and billing its count', async () => {
    const { data, response } = await client.embeddings.create({ model: 'wire-embed', input: ['one', 'two'], dimensions: 3 }).withResponse();
    expect(data.model).toBe('wire-embed');
    expect(data.data.map((d) => d.embedding)).toEqual([wireVector(0, 3), wireVector(1, 3)]);
    expect(first.lastRequest()?.body).toMatchObject({ model: 'text-embedding-3-small', input: ['one', 'two'], dimensions: 3, encoding_format: 'base64' });
    expect(first.lastRequest()?.headers.authorization).toBe('Bearer sk-first-provider-secret');
    const { usage } = await recordsOf(response.headers.get('x-request-id') as string);
    expect(usage[0]).toMatchObject({ provider: 'first', tokens: { input: 2 * WIRE_TOKENS_PER_INPUT, output: 0 } });
  });

  it('fails over from a provider answering 500 to the next, before anything was sent', async () => {
    const { data, response } = await client.embeddings.create({ model: 'emb-failover', input: 'x' }).withResponse();
    expect(data.data[0]!.embedding).toEqual(wireVector(0));
    const { audit, usage } = await recordsOf(response.headers.get('x-request-id') as string);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ outcome: 'success', provider: 'second', attempts: 2, providers: ['first', 'second'], endpoint: 'embeddings' });
    expect(usage).toHaveLength(1);
    expect(usage[0]).toMatchObject({ provider: 'second', tokens: { input: WIRE_TOKENS_PER_INPUT, output: 0 } });
  });

  it("answers the provider's 400 as 400 INVALID_REQUEST, without failing over", async () => {
    const err = await client.embeddings.create({ model: 'emb-ada', input: 'x', dimensions: 256 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('INVALID_REQUEST');
    expect((err as Error).message).toContain('does not support specifying dimensions');
    const { audit, usage } = await recordsOf((err as InstanceType<typeof OpenAI.APIError>).requestID as string);
    expect(audit[0]).toMatchObject({ outcome: 'error', status: 400, error_code: 'INVALID_REQUEST', endpoint: 'embeddings', attempts: 1 });
    expect(usage[0]).toMatchObject({ finish_reason: 'error', tokens: { total: 0 } });
  });

  it('skips providers without embeddings, and refuses a model served only by them', async () => {
    const mixed = await client.embeddings.create({ model: 'mixed', input: 'x', encoding_format: 'float' });
    expect(mixed.data[0]!.embedding).toEqual(mockVector('x', 8));
    const err = await client.embeddings.create({ model: 'chat-only', input: 'x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('model');
    expect((err as Error).message).toContain('The model `chat-only` is served by a provider that has no embeddings.');
  });

  it('prices a request at the model entry input price', async () => {
    const { data, response } = await client.embeddings.create({ model: 'priced-embed', input: 'one two three four' }).withResponse();
    const { usage } = await recordsOf(response.headers.get('x-request-id') as string);
    expect(usage[0]?.tokens).toMatchObject({ input: data.usage.prompt_tokens, output: 0 });
    expect(usage[0]?.cost_usd).toBeCloseTo((data.usage.prompt_tokens * 2) / 1e6, 12);
  });
});

describe('embeddings: bad input', () => {
  const cases: [string, unknown, string][] = [
    ['an empty string', { model: 'mock-embed', input: '' }, 'input'],
    ['an empty array', { model: 'mock-embed', input: [] }, 'input'],
    ['2049 inputs', { model: 'mock-embed', input: Array.from({ length: 2049 }, (_, i) => `t${i}`) }, 'input'],
    ['an empty item', { model: 'mock-embed', input: ['a', ''] }, 'input[1]'],
    ['a number', { model: 'mock-embed', input: 5 }, 'input'],
    ['mixed kinds', { model: 'mock-embed', input: ['a', 1] }, 'input[1]'],
    ['no input', { model: 'mock-embed' }, 'input'],
    ['no model', { input: 'x' }, 'model'],
    ['a bad encoding', { model: 'mock-embed', input: 'x', encoding_format: 'int8' }, 'encoding_format'],
    ['bad dimensions', { model: 'mock-embed', input: 'x', dimensions: 0 }, 'dimensions'],
    ['a bad user', { model: 'mock-embed', input: 'x', user: 7 }, 'user'],
    ['a body that is not JSON', '{"model":', 'body'],
    ['a body that is an array', '[1,2]', 'body'],
  ];
  for (const [what, body, param] of cases) {
    it(`answers ${what} with 400 naming ${param}, audited, with no usage record`, async () => {
      const requestId = await refused(await post(body), 400, 'INVALID_REQUEST', param);
      const { audit, usage } = await recordsOf(requestId);
      expect(audit).toHaveLength(1);
      expect(audit[0]).toMatchObject({ outcome: 'error', status: 400, error_code: 'INVALID_REQUEST', endpoint: 'embeddings', provider: null });
      expect(usage).toHaveLength(0);
    });
  }

  it('refuses token ids on a provider without them (Gemini) naming input, and takes them where the provider does', async () => {
    const before = google.requests();
    await refused(await post({ model: 'gem-embed', input: [[1, 2], [3]] }), 400, 'INVALID_REQUEST', 'input');
    expect(google.requests()).toBe(before);
    const texts = await client.embeddings.create({ model: 'gem-embed', input: ['a', 'b'], dimensions: 2 });
    expect(texts.data.map((d) => d.embedding)).toEqual([[1 / 16, 2 / 16], [2 / 16, 4 / 16]]);
    expect((await post({ model: 'wire-embed', input: [[1, 2], [3]] })).status).toBe(200);
    expect((await post({ model: 'mock-embed', input: [1, 2, 3] })).status).toBe(200);
  });

  it('answers an unknown model 404, no key 401, GET 405', async () => {
    await refused(await post({ model: 'nope', input: 'x' }), 404, 'MODEL_NOT_FOUND', 'model');
    await refused(await post({ model: 'mock-embed', input: 'x' }, ''), 401, 'UNAUTHORIZED');
    await refused(await fetch(`${h.url}/v1/embeddings`), 405, 'METHOD_NOT_ALLOWED');
  });
});

describe('embeddings: project policy', () => {
  async function projectWith(policy: Partial<ProjectPolicy>): Promise<{ key: TestKey; client: OpenAI }> {
    const projected = await projectTestKey(h.redis, h.keys);
    await h.redis.set(
      h.keys.projectPolicy(projected.projectId),
      encodeProjectPolicy({ id: projected.projectId, quota_tokens: null, quota_period: 'total', rate_limits: NO_RATE_LIMITS, allowed_models: null, max_tokens_cap: null, ...policy }),
    );
    return { key: projected, client: new OpenAI({ apiKey: projected.key, baseURL: `${h.url}/v1`, maxRetries: 0 }) };
  }

  it("reserves the input estimate against the quota, bills the provider's count, and refuses what would pass it", async () => {
    const small = 'one two three';
    const large = 'lorem ipsum dolor sit amet '.repeat(40);
    const quota = estimateEmbeddingsTokens(small) + 20;
    expect(estimateEmbeddingsTokens(large)).toBeGreaterThan(quota);
    const p = await projectWith({ quota_tokens: quota });
    const ok = await p.client.embeddings.create({ model: 'mock-embed', input: small });
    expect(ok.usage.prompt_tokens).toBe(countTokens(small));
    await eventually(async () => Number(await h.redis.hget(h.keys.quotaLedger(p.key.projectId, 'total'), 'charged')) === ok.usage.prompt_tokens, 'the provider count reaches the ledger');

    const requestId = await refused(await post({ model: 'mock-embed', input: large }, p.key.key), 429, 'QUOTA_EXCEEDED');
    const { audit, usage } = await recordsOf(requestId);
    expect(audit[0]).toMatchObject({ outcome: 'policy_blocked', status: 429, error_code: 'QUOTA_EXCEEDED', endpoint: 'embeddings' });
    expect(usage).toHaveLength(0);
  });

  it('charges rate limits the input estimate', async () => {
    const small = 'tiny';
    const large = 'many words to embed here '.repeat(20);
    const p = await projectWith({ rate_limits: { ...NO_RATE_LIMITS, key_tpm: estimateEmbeddingsTokens(large) - 1 } });
    expect((await post({ model: 'mock-embed', input: small }, p.key.key)).status).toBe(200);
    const res = await post({ model: 'mock-embed', input: large }, p.key.key);
    expect(res.headers.get('retry-after')).toBeTruthy();
    const requestId = await refused(res, 429, 'RATE_LIMITED');
    const { audit } = await recordsOf(requestId);
    expect(audit[0]).toMatchObject({ outcome: 'policy_blocked', status: 429, error_code: 'RATE_LIMITED', endpoint: 'embeddings' });
  });

  it("refuses a model outside the project's allow-list", async () => {
    const p = await projectWith({ allowed_models: ['wire-embed'] });
    const requestId = await refused(await post({ model: 'mock-embed', input: 'x' }, p.key.key), 403, 'MODEL_NOT_ALLOWED', 'model');
    expect((await recordsOf(requestId)).audit[0]).toMatchObject({ outcome: 'policy_blocked', endpoint: 'embeddings' });
  });
});

describe('embeddings: revocation in flight', () => {
  it('answers 401 when the key is deleted while the provider works, and stops the provider call', async () => {
    const doomed = await projectTestKey(h.redis, h.keys);
    const before = first.requests();
    const abortedBefore = first.aborted();
    const pending = post({ model: 'emb-slow', input: 'x' }, doomed.key);
    await eventually(() => first.requests() > before, 'the request reached the provider');
    await deleteTestKey(h.redis, h.keys, doomed);
    const requestId = await refused(await pending, 401, 'UNAUTHORIZED');
    await eventually(() => first.aborted() > abortedBefore, 'the provider call was aborted');
    const { audit, usage } = await recordsOf(requestId);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ outcome: 'auth_failed', status: 401, error_code: 'UNAUTHORIZED', endpoint: 'embeddings', provider: 'first' });
    expect(usage).toHaveLength(1);
    expect(usage[0]).toMatchObject({ finish_reason: 'cancelled', tokens: { output: 0 } });
  });
});
