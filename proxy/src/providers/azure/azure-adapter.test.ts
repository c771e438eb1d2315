import { GatewayError, type ProviderConfig } from '@gateway/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningWireMock } from '../../../../test-support/wire-mock.js';
import { Cancel } from '../cancel.js';
import { chatRequest, PROVIDER_KEY, runAdapterConformance, SCENARIOS } from '../conformance.case.js';
import { floatsToBase64 } from '../embeddings-answer.js';
import { embeddingsRequest, parseAnswer } from '../embeddings-request.case.js';
import { WIRE_TOKENS_PER_INPUT, wireVector } from '../../../test/wire-mocks/openai-embeddings-wire.js';
import { AzureAdapter, DEFAULT_AZURE_API_VERSION } from './azure-adapter.js';
import { AZURE_SCENARIOS, startAzureWireMock } from '../../../test/wire-mocks/azure-wire-mock.js';

let mock: RunningWireMock;
const built: AzureAdapter[] = [];
beforeAll(async () => {
  mock = await startAzureWireMock();
});
afterAll(async () => {
  for (const a of built) await a.close();
  await mock?.close();
});

const config = (options: Record<string, unknown> = {}, baseUrl = mock.baseUrl): ProviderConfig => ({
  name: 'azure-east',
  type: 'azure',
  base_url: baseUrl,
  api_key: PROVIDER_KEY,
  models: [{ id: 'gw-model', upstream: 'conf-text', price: null }],
  connect_timeout_ms: 1000,
  timeout_ms: 300,
  idle_timeout_ms: 5000,
  max_connections: 4,
  max_queued: 1024,
  options,
});

const azure = (options: Record<string, unknown> = {}, baseUrl?: string) => {
  const a = new AzureAdapter(config(options, baseUrl));
  built.push(a);
  return a;
};
const adapter = () => azure();

runAdapterConformance('azure', () => ({
  model: 'gw-model',
  adapter,
  wire: () => ({ adapter, mock, reportsCached: true, keyHeader: 'api-key' }),
}));

async function failure(promise: Promise<unknown>): Promise<GatewayError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(GatewayError);
  return err as GatewayError;
}

async function collect(events: AsyncIterable<string>): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for await (const data of events) out.push(JSON.parse(data) as Record<string, unknown>);
  return out;
}

const lastBody = () => mock.lastRequest()?.body as Record<string, unknown>;

describe('azure adapter: the request', () => {
  it('calls the deployment URL with the default api-version and the key in api-key, with no Authorization', async () => {
    await azure().complete(chatRequest('gw-model', {}, 'conf-text'), new Cancel());
    const seen = mock.lastRequest();
    expect(seen?.path).toBe(`/openai/deployments/conf-text/chat/completions?api-version=${DEFAULT_AZURE_API_VERSION}`);
    expect(seen?.headers['api-key']).toBe(PROVIDER_KEY);
    expect(seen?.headers.authorization).toBeUndefined();
    expect(lastBody().model).toBe('conf-text');
  });

  it('takes options.api_version, a base_url ending in /openai, and a base_url under a path (an API gateway)', async () => {
    await azure({ api_version: '2025-04-01-preview' }, `${mock.baseUrl}/openai/`).complete(chatRequest('gw-model', {}, 'conf-text'), new Cancel());
    expect(mock.lastRequest()?.path).toBe('/openai/deployments/conf-text/chat/completions?api-version=2025-04-01-preview');
    await azure({}, `${mock.baseUrl}/ai/eastus`).complete(chatRequest('gw-model', {}, 'conf-text'), new Cancel());
    expect(mock.lastRequest()?.path).toBe(`/ai/eastus/openai/deployments/conf-text/chat/completions?api-version=${DEFAULT_AZURE_API_VERSION}`);
  });

  it('escapes the deployment name in the path', async () => {
    await azure().complete(chatRequest('gw-model', {}, 'a/b?c'), new Cancel());
    expect(mock.lastRequest()?.path).toBe(`/openai/deployments/a%2Fb%3Fc/chat/completions?api-version=${DEFAULT_AZURE_API_VERSION}`);
  });

  it("maps Azure's refusal of an API version it does not serve to INVALID_REQUEST", async () => {
    const err = await failure(azure({ api_version: '2023-01-01' }).complete(chatRequest('gw-model', {}, 'conf-text'), new Cancel()));
    expect(err).toMatchObject({ code: 'INVALID_REQUEST', retryable: false });
    expect(err.message).toContain('API version not supported');
  });

  it('sends max_completion_tokens to an o-series or gpt-5 deployment, and to any deployment when the option says so', async () => {
    await azure().complete(chatRequest('gw-model', { max_tokens: 64 }, 'o4-mini'), new Cancel());
    expect(lastBody()).toMatchObject({ max_completion_tokens: 64 });
    expect('max_tokens' in lastBody()).toBe(false);
    await azure({ max_tokens_field: 'max_completion_tokens' }).complete(chatRequest('gw-model', { max_tokens: 32 }, 'reasoner-prod'), new Cancel());
    expect(lastBody()).toMatchObject({ max_completion_tokens: 32 });
    expect('max_tokens' in lastBody()).toBe(false);
    await azure().complete(chatRequest('gw-model', { max_tokens: 16 }, 'conf-text'), new Cancel());
    expect(lastBody()).toMatchObject({ max_tokens: 16 });
  });
});

describe('azure adapter: options', () => {
  it('refuses a bad or unknown option, a missing key or base_url, naming the provider', () => {
    expect(() => azure({ api_version: 'latest' })).toThrow(/provider azure-east: options\.api_version must be/);
    expect(() => azure({ apiVersion: '2024-10-21' })).toThrow(/provider azure-east: unknown option options\.apiVersion/);
    expect(() => azure({ max_tokens_field: 'tokens' })).toThrow(/provider azure-east: options\.max_tokens_field/);
    expect(() => new AzureAdapter({ ...config(), api_key: null })).toThrow(/provider azure-east: api_key is required/);
    expect(() => new AzureAdapter({ ...config(), base_url: null })).toThrow(/provider azure-east: base_url is required/);
    expect(() => azure({}, `${mock.baseUrl}?api-version=2024-10-21`)).toThrow(/provider azure-east: base_url must have no query/);
  });
});

describe('azure adapter: content filter and rate limits', () => {
  it('maps a prompt refused by the content filter to INVALID_REQUEST with its message, on messages, not retryable', async () => {
    const err = await failure(azure().complete(chatRequest('gw-model', {}, AZURE_SCENARIOS.filteredPrompt), new Cancel()));
    expect(err).toMatchObject({ code: 'INVALID_REQUEST', param: 'messages', retryable: false });
    expect(err.message).toContain("triggering Azure OpenAI's content management policy");
  });

  it('maps an answer cut by the content filter to content_filter, its verdicts passed on untouched', async () => {
    const result = await azure().complete(chatRequest('gw-model', {}, AZURE_SCENARIOS.filteredAnswer), new Cancel());
    expect(result.finishReason).toBe('content_filter');
    const body = JSON.parse(result.body.toString('utf8')) as { choices: { finish_reason: string; content_filter_results: unknown }[]; prompt_filter_results: unknown };
    expect(body.choices[0]?.finish_reason).toBe('content_filter');
    expect(body.choices[0]?.content_filter_results).toMatchObject({ violence: { filtered: true, severity: 'medium' } });
    expect(body.prompt_filter_results).toMatchObject([{ prompt_index: 0, content_filter_results: { hate: { filtered: false } } }]);

    const { meta, events } = await azure().stream(chatRequest('gw-model', { stream: true }, AZURE_SCENARIOS.filteredAnswer), new Cancel());
    const chunks = (await collect(events)) as { choices: { finish_reason: string | null; content_filter_results?: unknown }[] }[];
    expect(chunks.at(-1)?.choices[0]).toMatchObject({ finish_reason: 'content_filter', content_filter_results: { violence: { filtered: true } } });
    expect(meta.finishReason).toBe('content_filter');
  });

  it('passes prompt_filter_results and content_filter_results of a normal answer through', async () => {
    const result = await azure().complete(chatRequest('gw-model', {}, SCENARIOS.text), new Cancel());
    const body = JSON.parse(result.body.toString('utf8')) as Record<string, unknown>;
    expect(body.prompt_filter_results).toBeDefined();
    expect((body.choices as { content_filter_results?: unknown }[])[0]?.content_filter_results).toMatchObject({ hate: { filtered: false, severity: 'safe' } });
  });

  it("puts a stream's prompt_filter_results on its first chunk instead of Azure's chunk without choices", async () => {
    const { events } = await azure().stream(chatRequest('gw-model', { stream: true, stream_options: { include_usage: true } }, SCENARIOS.text), new Cancel());
    const chunks = (await collect(events)) as { object: string; choices: { delta: { role?: string; content?: string }; content_filter_results?: unknown }[]; prompt_filter_results?: unknown; usage?: unknown }[];
    expect(chunks[0]?.object).toBe('chat.completion.chunk');
    expect(chunks[0]?.choices[0]?.delta.role).toBe('assistant');
    expect(chunks[0]?.prompt_filter_results).toMatchObject([{ prompt_index: 0, content_filter_results: { jailbreak: { detected: false } } }]);
    expect(chunks.slice(1).some((c) => c.prompt_filter_results !== undefined)).toBe(false);
    expect(chunks.filter((c) => c.choices.length === 0).map((c) => c.usage !== undefined)).toEqual([true]);
    expect(chunks.find((c) => c.choices[0]?.delta.content === 'Hello')?.choices[0]?.content_filter_results).toMatchObject({ hate: { filtered: false } });
  });

  it('honours retry-after-ms over retry-after, in whole seconds rounded up', async () => {
    const err = await failure(azure().complete(chatRequest('gw-model', {}, AZURE_SCENARIOS.retryAfterMs), new Cancel()));
    expect(err).toMatchObject({ code: 'RATE_LIMITED', retryAfter: 3, retryable: true });
  });
});

describe('azure adapter: embeddings', () => {
  it('posts to the deployment embeddings path with the api-version and the key in api-key, answering with the client model id', async () => {
    const result = await azure().embed(embeddingsRequest('gw-embed', { input: ['a', 'b'], dimensions: 2, encoding_format: 'base64' }, 'text-embedding-3-small'), new Cancel());
    const seen = mock.lastRequest();
    expect(seen?.path).toBe(`/openai/deployments/text-embedding-3-small/embeddings?api-version=${DEFAULT_AZURE_API_VERSION}`);
    expect(seen?.headers['api-key']).toBe(PROVIDER_KEY);
    expect(lastBody()).toMatchObject({ model: 'text-embedding-3-small', input: ['a', 'b'], dimensions: 2, encoding_format: 'base64' });
    const answer = parseAnswer(result.body);
    expect(answer.model).toBe('gw-embed');
    expect(answer.data.map((d) => d.embedding)).toEqual([floatsToBase64(wireVector(0, 2)), floatsToBase64(wireVector(1, 2))]);
    expect(result.usage.input).toBe(2 * WIRE_TOKENS_PER_INPUT);
  });

  it('refuses dimensions before anything is sent on an API version older than 2024-02-01, and embeds without them', async () => {
    const old = azure({ api_version: '2023-05-15' });
    const before = mock.requests();
    const refused = await failure(old.embed(embeddingsRequest('gw-embed', { dimensions: 256 }, 'text-embedding-3-small'), new Cancel()));
    expect(refused).toMatchObject({ code: 'INVALID_REQUEST', param: 'dimensions', retryable: false });
    expect(mock.requests()).toBe(before);
    const result = await old.embed(embeddingsRequest('gw-embed', { input: 'x' }, 'text-embedding-3-small'), new Cancel());
    expect(mock.lastRequest()?.path).toBe('/openai/deployments/text-embedding-3-small/embeddings?api-version=2023-05-15');
    expect(parseAnswer(result.body).data[0]?.embedding).toEqual(wireVector(0));
  });

  it("maps Azure's 429 with retry-after-ms, and a provider 400, as for chat", async () => {
    expect(await failure(azure().embed(embeddingsRequest('gw-embed', {}, SCENARIOS.status429), new Cancel()))).toMatchObject({ code: 'RATE_LIMITED', retryable: true, retryAfter: 7 });
    expect(await failure(azure().embed(embeddingsRequest('gw-embed', {}, SCENARIOS.status400), new Cancel()))).toMatchObject({ code: 'INVALID_REQUEST', retryable: false });
    expect(await failure(azure().embed(embeddingsRequest('gw-embed', {}, SCENARIOS.status500), new Cancel()))).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: true });
  });
});
