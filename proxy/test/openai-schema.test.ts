import { Ajv, type ValidateFunction } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSseDecoder } from '@gateway/shared';
import { projectTestKey, type TestKey } from '../../test-support/redis.js';
import type { RunningWireMock } from '../../test-support/wire-mock.js';
import { startOpenAiWireMock } from './wire-mocks/openai-wire-mock.js';
import { startHarness, type Harness } from './harness.js';
import { chatCompletion, chatCompletionChunk, embeddingsList, errorResponse, modelsList, response, responseStreamEvents } from './openai-schema/openai-schemas.js';

/**
 * Every OpenAI-shaped answer the gateway produces, validated against the schemas of OpenAI's
 * published OpenAPI document (openai-schema/openai-schemas.ts): chat completions whole and
 * streamed, Responses objects and every stream event (text, tool calls, a failure mid-stream),
 * embeddings, the models list and errors. A field renamed, dropped or given a value outside a
 * closed enum fails here before a strict client notices.
 */
let wire: RunningWireMock;
let h: Harness;
let key: TestKey;
const ajv = new Ajv({ allErrors: true, strict: false });

beforeAll(async () => {
  wire = await startOpenAiWireMock();
  h = await startHarness(
    'openai-schema',
    `providers:
  - name: builtin
    type: mock
    models: [mock-1]
  - name: wire
    type: openai
    base_url: ${wire.baseUrl}/v1
    api_key: sk-wire-provider-secret
    models: [{ id: broken-stream, upstream: conf-stream-error }, { id: text-embedding-3-small, upstream: text-embedding-3-small }]
`,
  );
  key = await projectTestKey(h.redis, h.keys);
});

afterAll(async () => {
  await h?.stop();
  await wire?.close();
});

function expectValid(validate: ValidateFunction, value: unknown, what: string): void {
  const ok = validate(value);
  expect(ok ? [] : (validate.errors ?? []).map((e) => `${what}${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`)).toEqual([]);
}

const compiled = new Map<object, ValidateFunction>();
function check(schema: object, value: unknown, what: string): void {
  let validate = compiled.get(schema);
  if (validate === undefined) compiled.set(schema, (validate = ajv.compile(schema)));
  expectValid(validate, value, what);
}

function call(path: string, body?: unknown): Promise<Response> {
  return fetch(`${h.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key.key}` },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

function sse(text: string): { event: string | undefined; data: string }[] {
  const out: { event: string | undefined; data: string }[] = [];
  createSseDecoder((e) => out.push({ event: e.event, data: e.data })).feed(text);
  return out;
}

const WEATHER = { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

describe('chat completions', () => {
  it('a completion, and one with a tool call, are CreateChatCompletionResponse', async () => {
    const plain = await call('/v1/chat/completions', { model: 'mock-1', messages: [{ role: 'user', content: 'hello' }] });
    expect(plain.status).toBe(200);
    check(chatCompletion, await plain.json(), 'completion');
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: WEATHER.parameters } }];
    const called = await call('/v1/chat/completions', { model: 'mock-1', messages: [{ role: 'user', content: 'use get_weather' }], tools, tool_choice: 'required' });
    const body = (await called.json()) as { choices: { finish_reason: string }[] };
    expect(body.choices[0]?.finish_reason).toBe('tool_calls');
    check(chatCompletion, body, 'tool call completion');
  });

  it('every chunk of a stream, the usage chunk included, is CreateChatCompletionStreamResponse', async () => {
    const res = await call('/v1/chat/completions', { model: 'mock-1', messages: [{ role: 'user', content: 'hello there' }], stream: true, stream_options: { include_usage: true } });
    const events = sse(await res.text());
    expect(events.at(-1)?.data).toBe('[DONE]');
    const chunks = events.slice(0, -1);
    expect(chunks.length).toBeGreaterThan(2);
    chunks.forEach((e, i) => check(chatCompletionChunk, JSON.parse(e.data), `chunk ${i}`));
  });
});

describe('responses', () => {
  it('a Response object, with text and with a function call, is a Response', async () => {
    const text = await call('/v1/responses', { model: 'mock-1', input: 'hello' });
    expect(text.status).toBe(200);
    check(response, await text.json(), 'response');
    const called = await call('/v1/responses', { model: 'mock-1', input: 'use get_weather', tools: [WEATHER], tool_choice: 'required' });
    const body = (await called.json()) as { output: { type: string }[] };
    expect(body.output.map((o) => o.type)).toContain('function_call');
    check(response, body, 'function call response');
  });

  it('every event of a text stream and of a function call stream is its ResponseStreamEvent', async () => {
    const seen = new Set<string>();
    for (const request of [
      { model: 'mock-1', input: 'hello there', stream: true },
      { model: 'mock-1', input: 'use get_weather', tools: [WEATHER], tool_choice: 'required', stream: true },
    ]) {
      const events = sse(await (await call('/v1/responses', request)).text());
      for (const e of events) {
        const schema = responseStreamEvents[e.event ?? ''];
        expect(schema, `a schema for ${e.event}`).toBeDefined();
        check(schema!, JSON.parse(e.data), e.event!);
        seen.add(e.event!);
      }
    }
    for (const type of ['response.created', 'response.output_text.delta', 'response.function_call_arguments.done', 'response.completed']) expect(seen).toContain(type);
  });

  it('a stream that fails ends with an error event and response.failed, both within the schema', async () => {
    const events = sse(await (await call('/v1/responses', { model: 'broken-stream', input: 'hello', stream: true })).text());
    const [error, failed] = events.slice(-2);
    expect([error?.event, failed?.event]).toEqual(['error', 'response.failed']);
    check(responseStreamEvents.error!, JSON.parse(error!.data), 'error');
    const body = JSON.parse(failed!.data) as { response: { error: { code: string; gateway_code: string } } };
    check(responseStreamEvents['response.failed']!, body, 'response.failed');
    expect(body.response.error).toMatchObject({ code: 'server_error', gateway_code: 'UPSTREAM_ERROR' });
  });
});

describe('embeddings and models', () => {
  it('an embeddings answer, floats and base64, is CreateEmbeddingResponse', async () => {
    for (const encoding_format of ['float', 'base64']) {
      const res = await call('/v1/embeddings', { model: 'text-embedding-3-small', input: ['one', 'two'], encoding_format });
      expect(res.status).toBe(200);
      check(embeddingsList, await res.json(), `embeddings (${encoding_format})`);
    }
  });

  it('the models list is ListModelsResponse', async () => {
    const res = await call('/v1/models');
    expect(res.status).toBe(200);
    check(modelsList, await res.json(), 'models');
  });
});

describe('errors', () => {
  it('every refusal is ErrorResponse', async () => {
    const answers = [
      await fetch(`${h.url}/v1/chat/completions`, { method: 'POST', body: '{}' }),
      await call('/v1/chat/completions', { model: 'nope', messages: [{ role: 'user', content: 'x' }] }),
      await call('/v1/chat/completions', { model: 'mock-1' }),
      await call('/v1/responses', { model: 'mock-1', input: 'x', previous_response_id: 'resp_1' }),
      await call('/v1/embeddings', { model: 'text-embedding-3-small', input: [] }),
      await fetch(`${h.url}/v1/models`, { method: 'DELETE' }),
      await fetch(`${h.url}/v1/nothing`),
    ];
    expect(answers.map((r) => r.status)).toEqual([401, 404, 400, 400, 400, 405, 404]);
    for (const [i, res] of answers.entries()) check(errorResponse, await res.json(), `error ${i}`);
  });
});
