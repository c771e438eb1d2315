import { GatewayError, type ProviderConfig } from '@gateway/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningWireMock } from '../../../../test-support/wire-mock.js';
import { Cancel } from '../cancel.js';
import { chatRequest, PROVIDER_KEY, runAdapterConformance } from '../conformance.case.js';
import { OpenAiAdapter } from './openai-adapter.js';
import { startOpenAiWireMock } from './openai-wire-mock.case.js';

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
