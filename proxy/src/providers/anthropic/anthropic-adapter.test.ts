import { GatewayError, type ProviderConfig } from '@gateway/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningWireMock } from '../../../../test-support/wire-mock.js';
import { Cancel } from '../cancel.js';
import { chatRequest, PROVIDER_KEY, runAdapterConformance, SCENARIOS, TOOL } from '../conformance.case.js';
import { createAdapter, PROVIDER_TYPES } from '../registry.js';
import { ANTHROPIC_VERSION, AnthropicAdapter } from './anthropic-adapter.js';
import { EXTRA, startAnthropicWireMock } from '../../../test/wire-mocks/anthropic-wire-mock.js';

let mock: RunningWireMock;
beforeAll(async () => {
  mock = await startAnthropicWireMock();
});
afterAll(async () => {
  await mock?.close();
});

function config(overrides: Partial<ProviderConfig> = {}): ProviderConfig {
  return {
    name: 'claude',
    type: 'anthropic',
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

const adapter = () => new AnthropicAdapter(config());

runAdapterConformance('anthropic', () => ({
  model: 'claude-haiku-4-5',
  adapter,
  wire: () => ({ adapter, mock, reportsCached: true, keyHeader: 'x-api-key' }),
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

async function collect(events: AsyncIterable<string>): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for await (const data of events) out.push(JSON.parse(data) as Record<string, unknown>);
  return out;
}

describe('anthropic adapter on the wire', () => {
  it('is registered with its default base URL', () => {
    expect(PROVIDER_TYPES).toContainEqual({ type: 'anthropic', defaultBaseUrl: 'https://api.anthropic.com', usesBaseUrl: true, fields: { batch: 'optional' } });
    expect(createAdapter(config())).toBeInstanceOf(AnthropicAdapter);
  });

  it('posts to /v1/messages with x-api-key and the pinned anthropic-version, never a bearer token', async () => {
    await adapter().complete(chatRequest('gw-model', { max_tokens: 20 }, SCENARIOS.text), new Cancel());
    const seen = mock.lastRequest();
    expect(seen?.path).toBe('/v1/messages');
    expect(seen?.headers['x-api-key']).toBe(PROVIDER_KEY);
    expect(seen?.headers['anthropic-version']).toBe(ANTHROPIC_VERSION);
    expect(seen?.headers.authorization).toBeUndefined();
    expect(seen?.body).toEqual({ model: SCENARIOS.text, max_tokens: 20, messages: [{ role: 'user', content: 'Tell me something' }] });
  });

  it('sends the configured default max_tokens when the client set none', async () => {
    await new AnthropicAdapter(config({ options: { default_max_tokens: 777 } })).complete(chatRequest('gw-model', {}, SCENARIOS.text), new Cancel());
    expect((mock.lastRequest()?.body as { max_tokens: number }).max_tokens).toBe(777);
    await adapter().complete(chatRequest('gw-model', {}, SCENARIOS.text), new Cancel());
    expect((mock.lastRequest()?.body as { max_tokens: number }).max_tokens).toBe(4096);
  });

  it('sends a whole tool conversation Anthropic accepts', async () => {
    const result = await adapter().complete(
      chatRequest(
        'gw-model',
        {
          messages: [
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: 'Weather in Paris?' },
            { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_01A', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
            { role: 'tool', tool_call_id: 'toolu_01A', content: 'Sunny' },
            { role: 'user', content: 'Thanks' },
          ],
          tools: [TOOL],
          tool_choice: 'required',
          parallel_tool_calls: false,
          temperature: 1.5,
          stream: false,
        },
        SCENARIOS.text,
      ),
      new Cancel(),
    );
    expect(result.finishReason).toBe('stop');
    const sent = mock.lastRequest()?.body as Record<string, unknown>;
    expect(sent).toMatchObject({ system: 'Be brief.', temperature: 1, tool_choice: { type: 'any', disable_parallel_tool_use: true } });
    expect((sent.messages as { role: string }[]).map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
  });

  it('sends a json_schema response_format as output_config.format, whole and streamed, and leaves dropped fields out', async () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
    const response_format = { type: 'json_schema', json_schema: { name: 'answer', strict: true, schema } };
    const result = await adapter().complete(chatRequest('gw-model', { max_tokens: 20, response_format, seed: 7, presence_penalty: 0.5 }, SCENARIOS.text), new Cancel());
    expect(result.finishReason).toBe('stop');
    expect(mock.lastRequest()?.body).toEqual({
      model: SCENARIOS.text,
      max_tokens: 20,
      messages: [{ role: 'user', content: 'Tell me something' }],
      output_config: { format: { type: 'json_schema', schema } },
    });
    const { events } = await adapter().stream(chatRequest('gw-model', { stream: true, response_format }, SCENARIOS.text), new Cancel());
    expect((await collect(events)).length).toBeGreaterThan(1);
    expect(mock.lastRequest()?.body).toMatchObject({ stream: true, output_config: { format: { type: 'json_schema', schema } } });
  });

  it('translates thinking blocks away and counts cache writes and reads into the prompt', async () => {
    const result = await adapter().complete(chatRequest('gw-model', {}, EXTRA.thinking), new Cancel());
    const body = JSON.parse(result.body.toString('utf8')) as { model: string; choices: { message: { content: string } }[]; usage: Record<string, unknown> };
    expect(body.choices[0]?.message.content).toBe('Hello there');
    expect(body.model).toBe(`${EXTRA.thinking}-20250101`);
    expect(body.usage).toEqual({ prompt_tokens: 11, completion_tokens: 9, total_tokens: 20, prompt_tokens_details: { cached_tokens: 2 } });
    expect(result.usage).toEqual({ input: 11, output: 9, cached: 2, cacheWrite: 4 });

    const { meta, events } = await adapter().stream(chatRequest('gw-model', { stream: true }, EXTRA.thinking), new Cancel());
    const chunks = (await collect(events)) as { choices: { delta: { content?: string } }[] }[];
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Hello there');
    expect(meta.usage).toEqual({ input: 11, output: 9, cached: 2, cacheWrite: 4 });
  });

  it('maps refusal to content_filter, and pause_turn to stop with the raw reason kept', async () => {
    const refused = await adapter().complete(chatRequest('gw-model', {}, EXTRA.refusal), new Cancel());
    expect(refused.finishReason).toBe('content_filter');
    expect(JSON.parse(refused.body.toString('utf8')).choices[0].finish_reason).toBe('content_filter');
    const paused = await adapter().complete(chatRequest('gw-model', {}, EXTRA.pauseTurn), new Cancel());
    expect(paused).toMatchObject({ finishReason: 'stop', rawFinishReason: 'pause_turn' });
    const { meta, events } = await adapter().stream(chatRequest('gw-model', { stream: true }, EXTRA.pauseTurn), new Cancel());
    await collect(events);
    expect(meta).toMatchObject({ finishReason: 'stop', rawFinishReason: 'pause_turn' });
  });

  it('streams two tool calls indexed 0 and 1, the second with empty-object arguments', async () => {
    const { events } = await adapter().stream(chatRequest('gw-model', { stream: true, tools: [TOOL] }, EXTRA.twoTools), new Cancel());
    const chunks = (await collect(events)) as { choices: { delta: { tool_calls?: { index: number; id?: string; function?: { arguments?: string } }[] } }[] }[];
    const calls = new Map<number, string>();
    for (const d of chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? [])) calls.set(d.index, (calls.get(d.index) ?? '') + (d.function?.arguments ?? ''));
    expect([...calls]).toEqual([
      [0, '{"city":"Paris"}'],
      [1, '{}'],
    ]);
  });

  it('takes the latest cumulative usage of several message_delta events', async () => {
    const { meta, events } = await adapter().stream(chatRequest('gw-model', { stream: true, stream_options: { include_usage: true } }, EXTRA.twoDeltas), new Cancel());
    const chunks = await collect(events);
    expect(meta.usage).toEqual({ input: 11, output: 5, cached: 3 });
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 11, completion_tokens: 5 } });
  });

  it('fails a stream that ends without message_stop', async () => {
    const { events } = await adapter().stream(chatRequest('gw-model', { stream: true }, EXTRA.cut), new Cancel());
    const err = await failure(collect(events));
    expect(err.code).toBe('UPSTREAM_ERROR');
  });

  it('scrubs the mid-stream error event and does not retry it', async () => {
    const { events } = await adapter().stream(chatRequest('gw-model', { stream: true }, SCENARIOS.streamError), new Cancel());
    const err = await failure(collect(events));
    expect(err).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: false });
    expect(err.message).toContain('Overloaded');
  });

  it('fails over on an overloaded error event sent instead of the message, without cancelling the request', async () => {
    const cancel = new Cancel();
    const err = await failure(adapter().stream(chatRequest('gw-model', { stream: true }, EXTRA.overloadedFirst), cancel));
    expect(err).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: true });
    // The router only tries the next provider while the request itself is not cancelled.
    expect(cancel.aborted).toBe(false);
  });

  it('reports a refused provider key as the gateway’s misconfiguration, without the key', async () => {
    const err = await failure(adapter().complete(chatRequest('gw-model', {}, EXTRA.unauthorized), new Cancel()));
    expect(err).toMatchObject({ code: 'UPSTREAM_ERROR', status: 502, retryable: false });
    expect(err.message).toContain('api_key');
    expect(err.message).not.toContain(PROVIDER_KEY);
  });

  it('refuses a 200 answer that is not a JSON message', async () => {
    const err = await failure(adapter().complete(chatRequest('gw-model', {}, EXTRA.notJson), new Cancel()));
    expect(err).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: false });
  });

  it('treats 529 overloaded as retryable', async () => {
    const err = await failure(adapter().complete(chatRequest('gw-model', {}, EXTRA.overloaded), new Cancel()));
    expect(err).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: true });
  });

  it('refuses options it does not know or cannot use, naming the provider', () => {
    expect(() => new AnthropicAdapter(config({ options: { default_max_token: 10 } }))).toThrow(/provider claude: unknown option "default_max_token"/);
    expect(() => new AnthropicAdapter(config({ options: { default_max_tokens: 0 } }))).toThrow(/provider claude: option "default_max_tokens"/);
  });
});
