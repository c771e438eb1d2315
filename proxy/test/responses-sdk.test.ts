import { createOpenAI } from '@ai-sdk/openai';
import { APICallError, generateText, stepCountIs, streamText, tool } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { projectTestKey, type TestKey } from '../../test-support/redis.js';
import { startHarness, type Harness } from './harness.js';

/**
 * POST /v1/responses through the real proxy and the built-in mock provider, driven by the
 * official `openai` SDK (responses.create / responses.stream) and by the Vercel AI SDK's default
 * OpenAI model, which speaks the Responses API.
 */
let h: Harness;
let key: TestKey;
let client: OpenAI;
let requests = 0;

beforeAll(async () => {
  h = await startHarness(
    'responses-sdk',
    `providers:
  - name: builtin
    type: mock
    models: [mock-1]
    options: { chunks: 4, gap_ms: 0 }
`,
  );
  key = await projectTestKey(h.redis, h.keys);
  // Every request the clients make goes through this fetch, so the records can be counted.
  const counting: typeof fetch = (input, init) => {
    requests++;
    return fetch(input, init);
  };
  client = new OpenAI({ apiKey: key.key, baseURL: `${h.url}/v1`, maxRetries: 0, fetch: counting });
  openai = createOpenAI({ baseURL: `${h.url}/v1`, apiKey: key.key, fetch: counting });
});

afterAll(async () => {
  await h?.stop();
});

let openai: ReturnType<typeof createOpenAI>;

const weather: OpenAI.Responses.FunctionTool = {
  type: 'function',
  name: 'get_weather',
  description: 'Weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
};

describe('openai SDK: responses.create and responses.stream', () => {
  it('answers a non-streaming request with a completed Response', async () => {
    const response = await client.responses.create({ model: 'mock-1', input: 'Hi there', instructions: 'Be brief.', metadata: { run: '1' } });
    expect(response.object).toBe('response');
    expect(response.id).toMatch(/^resp_/);
    expect(response.status).toBe('completed');
    expect(response.model).toBe('mock-1');
    expect(response.instructions).toBe('Be brief.');
    expect(response.metadata).toEqual({ run: '1' });
    expect(response.output_text).toBe("This is the gateway's built-in mock provider. You said: Hi there");
    expect(response.output[0]).toMatchObject({ type: 'message', role: 'assistant', status: 'completed' });
    expect(response.usage?.input_tokens).toBeGreaterThan(0);
    expect(response.usage?.output_tokens).toBeGreaterThan(0);
    expect(response.usage?.total_tokens).toBe((response.usage?.input_tokens ?? 0) + (response.usage?.output_tokens ?? 0));
  });

  it('streams events in order, numbered, and gives the final response', async () => {
    const stream = client.responses.stream({ model: 'mock-1', input: 'Stream this answer please' });
    const types: string[] = [];
    const sequence: number[] = [];
    let deltas = '';
    for await (const event of stream) {
      types.push(event.type);
      sequence.push(event.sequence_number);
      if (event.type === 'response.output_text.delta') deltas += event.delta;
    }
    const final = await stream.finalResponse();
    expect(types.slice(0, 4)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
    expect(types.filter((t) => t === 'response.output_text.delta').length).toBeGreaterThan(1);
    expect(types.slice(-4)).toEqual(['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
    expect(sequence).toEqual(sequence.map((_, i) => i));
    expect(deltas).toBe("This is the gateway's built-in mock provider. You said: Stream this answer please");
    expect(final.output_text).toBe(deltas);
    expect(final.status).toBe('completed');
    expect(final.usage?.output_tokens).toBeGreaterThan(0);
  });

  it('calls a function and answers from its output (function_call_output), whole and streamed', async () => {
    const input: OpenAI.Responses.ResponseInput = [{ role: 'user', content: 'use get_weather for Paris' }];
    const first = await client.responses.create({ model: 'mock-1', input, tools: [weather] });
    const call = first.output.find((item) => item.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', status: 'completed' });
    expect(call?.id).toMatch(/^fc_/);
    if (call?.type !== 'function_call') throw new Error('no function call');
    expect(JSON.parse(call.arguments)).toEqual({ city: 'example city' });

    // The call goes back as the first response gave it (id and status included), then its output.
    const second = await client.responses.create({
      model: 'mock-1',
      input: [...input, call, { type: 'function_call_output', call_id: call.call_id, output: '{"temperature":21}' }],
      tools: [weather],
    });
    expect(second.output_text).toBe('The get_weather tool returned: {"temperature":21}');

    const streamed = client.responses.stream({ model: 'mock-1', input, tools: [weather], tool_choice: { type: 'function', name: 'get_weather' } });
    let argumentDeltas = '';
    streamed.on('response.function_call_arguments.delta', (event) => {
      argumentDeltas += event.delta;
    });
    const final = await streamed.finalResponse();
    const streamedCall = final.output.find((item) => item.type === 'function_call');
    expect(streamedCall).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: '{"city":"example city"}', status: 'completed' });
    expect(argumentDeltas).toBe('{"city":"example city"}');
  });

  it('reports an answer cut by max_output_tokens as incomplete, whole and streamed', async () => {
    const cut = await client.responses.create({ model: 'mock-1', input: 'Tell me a long story about dragons', max_output_tokens: 3 });
    expect(cut.status).toBe('incomplete');
    expect(cut.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(cut.max_output_tokens).toBe(3);
    expect(cut.usage?.output_tokens).toBe(3);

    const stream = client.responses.stream({ model: 'mock-1', input: 'Tell me a long story about dragons', max_output_tokens: 3 });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types.at(-1)).toBe('response.incomplete');
    const final = await stream.finalResponse();
    expect(final.status).toBe('incomplete');
    expect(final.incomplete_details?.reason).toBe('max_output_tokens');
  });

  it('refuses stateful parameters with 400 in the OpenAI error shape', async () => {
    const refused = await client.responses.create({ model: 'mock-1', input: 'x', previous_response_id: 'resp_123' }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    const err = refused as InstanceType<typeof OpenAI.BadRequestError>;
    expect(err.status).toBe(400);
    expect(err.code).toBe('INVALID_REQUEST');
    expect(err.param).toBe('previous_response_id');
    // Without its control plane the gateway keeps no responses (responses-stored.test.ts has one that does).
    expect(err.message).toMatch(/keeps none/);
  });
});

describe('Vercel AI SDK: the default OpenAI model (Responses API)', () => {
  it('generates text', async () => {
    const result = await generateText({ model: openai('mock-1'), system: 'Be brief.', prompt: 'Hello from the AI SDK' });
    expect(result.text).toBe("This is the gateway's built-in mock provider. You said: Hello from the AI SDK");
    expect(result.finishReason).toBe('stop');
    expect(result.usage.inputTokens).toBeGreaterThan(0);
    expect(result.usage.outputTokens).toBeGreaterThan(0);
    expect(result.response.modelId).toBe('mock-1');
  });

  it('streams text', async () => {
    const result = streamText({ model: openai('mock-1'), prompt: 'Stream from the AI SDK' });
    let text = '';
    for await (const piece of result.textStream) text += piece;
    expect(text).toBe("This is the gateway's built-in mock provider. You said: Stream from the AI SDK");
    expect(await result.finishReason).toBe('stop');
    expect((await result.usage).outputTokens).toBeGreaterThan(0);
  });

  it('reports the length finish when maxOutputTokens cuts the answer', async () => {
    const result = await generateText({ model: openai('mock-1'), prompt: 'Tell me a long story about dragons', maxOutputTokens: 4 });
    expect(result.finishReason).toBe('length');
    expect(result.usage.outputTokens).toBe(4);
  });

  const getWeather = tool({
    description: 'Weather in a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => ({ city, temperature: 21 }),
  });

  it('calls a tool defined with zod and answers from its result (generateText)', async () => {
    const result = await generateText({ model: openai('mock-1'), tools: { get_weather: getWeather }, stopWhen: stepCountIs(3), prompt: 'use get_weather for Paris' });
    expect(result.steps.length).toBe(2);
    expect(result.steps[0]?.finishReason).toBe('tool-calls');
    expect(result.steps[0]?.toolCalls[0]).toMatchObject({ toolName: 'get_weather', input: { city: 'example city' } });
    expect(result.steps[0]?.toolResults[0]).toMatchObject({ output: { city: 'example city', temperature: 21 } });
    expect(result.text).toBe('The get_weather tool returned: {"city":"example city","temperature":21}');
  });

  it('calls a tool while streaming (streamText)', async () => {
    const result = streamText({ model: openai('mock-1'), tools: { get_weather: getWeather }, stopWhen: stepCountIs(3), prompt: 'use get_weather for Rome' });
    const parts: string[] = [];
    for await (const part of result.fullStream) parts.push(part.type);
    expect(parts).toContain('tool-input-delta');
    expect(parts).toContain('tool-call');
    expect(parts).toContain('tool-result');
    expect(await result.text).toBe('The get_weather tool returned: {"city":"example city","temperature":21}');
  });

  it('continues a conversation with store: false, and says why item references are refused without it', async () => {
    const first = await generateText({ model: openai('mock-1'), prompt: 'First turn' });
    const messages = [...[{ role: 'user' as const, content: 'First turn' }], ...first.response.messages, { role: 'user' as const, content: 'Second turn' }];
    // By default the AI SDK refers to earlier output by id (item_reference), which needs stored responses.
    const refused = await generateText({ model: openai('mock-1'), messages, maxRetries: 0 }).catch((err: unknown) => err);
    expect(APICallError.isInstance(refused)).toBe(true);
    expect((refused as APICallError).statusCode).toBe(400);
    expect((refused as APICallError).message).toMatch(/store: false/);
    const second = await generateText({ model: openai('mock-1'), messages, providerOptions: { openai: { store: false } } });
    expect(second.text).toBe("This is the gateway's built-in mock provider. You said: Second turn");
  });
});

describe('records', () => {
  it('audits each request once and bills each that reached the provider once', async () => {
    const { usage, audit } = await h.records();
    expect(audit.length).toBe(requests);
    expect(new Set(audit.map((a) => a.id)).size).toBe(audit.length);
    const refused = audit.filter((a) => a.status === 400);
    expect(refused.length).toBe(2);
    for (const a of refused) expect(a).toMatchObject({ outcome: 'error', error_code: 'INVALID_REQUEST' });
    expect(usage.length).toBe(requests - refused.length);
    for (const u of usage) {
      expect(u).toMatchObject({ key_id: key.id, project_id: key.projectId, model: 'mock-1', provider: 'builtin' });
      expect(u.tokens.input).toBeGreaterThan(0);
      expect(u.tokens.output).toBeGreaterThan(0);
    }
    expect(new Set(usage.map((u) => u.finish_reason))).toEqual(new Set(['stop', 'tool_calls', 'max_tokens']));
    expect(usage.some((u) => u.stream)).toBe(true);
  });
});
