import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AuditEvent, UsageRecord } from '@gateway/shared';
import { projectTestKey, type TestKey } from '../../test-support/redis.js';
import type { RunningWireMock } from '../../test-support/wire-mock.js';
import { BEDROCK_ACCESS_DENIED, startBedrockWireMock, type BedrockWireMock } from './wire-mocks/bedrock-wire-mock.js';
import { startOpenAiWireMock } from './wire-mocks/openai-wire-mock.js';
import { startVertexWireMock, VERTEX_PERMISSION_DENIED, VERTEX_PROJECT, VERTEX_PROJECT_NUMBER, type VertexWireMock } from './wire-mocks/vertex-wire-mock.js';
import { startHarness, type Harness } from './harness.js';

/**
 * The official SDKs (openai, @anthropic-ai/sdk), unmodified, through the real proxy to Amazon
 * Bedrock (signature checked on every request), Google Vertex AI (Gemini and Claude models, with
 * access tokens from its token endpoint) and an OpenAI-compatible preset; and failover between
 * them like between any providers. Credentials come from the providers file's ${VAR}s.
 */
const AWS = { region: 'us-east-1', accessKeyId: 'AKIAGATEWAYTEST0001', secretAccessKey: 'aws-secret-never-in-a-record-0123456789', sessionToken: 'aws-session-never-in-a-record', apiKey: 'ABSK-bedrock-api-key-never-in-a-record' };
const ARN = 'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0';

let bedrock: BedrockWireMock;
let vertex: VertexWireMock;
let vllm: RunningWireMock;
let h: Harness;
let key: TestKey;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  bedrock = await startBedrockWireMock(AWS);
  vertex = await startVertexWireMock(mkdtempSync(join(tmpdir(), 'gw-vertex-')), { location: 'global' });
  vllm = await startOpenAiWireMock();
  h = await startHarness(
    'cloud-providers',
    `providers:
  - name: aws
    type: bedrock
    region: us-east-1
    base_url: ${bedrock.baseUrl}
    aws_access_key_id: \${AWS_ACCESS_KEY_ID}
    aws_secret_access_key: \${AWS_SECRET_ACCESS_KEY}
    aws_session_token: \${AWS_SESSION_TOKEN}
    timeout_ms: 500
    models:
      - { id: claude-bedrock, upstream: conf-text, price: { input: 3, output: 15, cached_input: 0.3, cache_write: 3.75 } }
      - { id: claude-profile, upstream: "${ARN}" }
      - { id: titan-embed, upstream: "amazon.titan-embed-text-v2:0", price: { input: 0.02, output: 0 } }
      - { id: shared-embed, upstream: amazon.titan-embed-text-throttled }
      - { id: bedrock-tools, upstream: conf-tools }
      - { id: bedrock-broken, upstream: bedrock-corrupt }
      - { id: shared-busy, upstream: conf-429 }
      - { id: shared-down, upstream: bedrock-unavailable }
      - { id: shared-throttled-stream, upstream: bedrock-throttled }
      - { id: bedrock-denied, upstream: bedrock-access-denied }
      - { id: claude-thinking, upstream: "us.anthropic.claude-thinking-v1:0" }
  - name: aws-keyed
    type: bedrock
    region: us-east-1
    base_url: ${bedrock.baseUrl}
    api_key: \${AWS_BEARER_TOKEN_BEDROCK}
    models: [{ id: claude-bedrock-keyed, upstream: conf-text }]
  - name: gcp
    type: vertex
    project: ${VERTEX_PROJECT}
    location: global
    credentials_file: ${vertex.keyFile}
    base_url: ${vertex.baseUrl}
    timeout_ms: 500
    models:
      - { id: gemini-vertex, upstream: gemini-2.5-flash }
      - { id: claude-vertex, upstream: claude-sonnet-4-5 }
      - { id: claude-vertex-tools, upstream: publishers/anthropic/models/conf-tools }
      - { id: vertex-embed, upstream: text-embedding-005, price: { input: 0.025, output: 0 } }
      - { id: shared-embed, upstream: text-embedding-005 }
      - { id: shared-busy, upstream: conf-text }
      - { id: shared-down, upstream: conf-text }
      - { id: shared-throttled-stream, upstream: conf-text }
      - { id: vertex-denied, upstream: gemini-denied }
  - name: local-vllm
    type: openai
    preset: vllm
    base_url: ${vllm.baseUrl}/v1
    models: [{ id: llama, upstream: conf-text }]
`,
    { AWS_ACCESS_KEY_ID: AWS.accessKeyId, AWS_SECRET_ACCESS_KEY: AWS.secretAccessKey, AWS_SESSION_TOKEN: AWS.sessionToken, AWS_BEARER_TOKEN_BEDROCK: AWS.apiKey },
  );
  key = await projectTestKey(h.redis, h.keys);
  openai = new OpenAI({ apiKey: key.key, baseURL: `${h.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: key.key, baseURL: h.url, maxRetries: 0 });
});

afterAll(async () => {
  await h?.stop();
  await bedrock?.close();
  await vertex?.close();
  await vllm?.close();
});

async function recordsOf(requestId: string): Promise<{ audit: AuditEvent[]; usage: UsageRecord[] }> {
  const { audit, usage } = await h.records();
  return { audit: audit.filter((a) => a.request_id === requestId), usage: usage.filter((u) => u.request_id === requestId) };
}

const weatherTool = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

describe('official openai SDK through the gateway to Bedrock', () => {
  it('completes, with cache reads and writes in the usage record and every request signed', async () => {
    const before = bedrock.verified();
    const res = await openai.chat.completions.create({ model: 'claude-bedrock', messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
    expect(res.data.choices[0]?.message).toMatchObject({ role: 'assistant', content: 'Hello there' });
    expect(res.data.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 3 } });
    expect(bedrock.verified()).toBe(before + 1);
    const { usage } = await recordsOf(res.response.headers.get('x-request-id') as string);
    expect(usage[0]).toMatchObject({ provider: 'aws', model: 'claude-bedrock', tokens: { input: 11, output: 2, cached: 3, cache_write: 2 } });
    // 6 plain prompt tokens at $3, 3 read from the cache at $0.3, 2 written to it at $3.75, 2 output at $15, per million.
    expect(usage[0]?.cost_usd).toBeCloseTo((6 * 3 + 3 * 0.3 + 2 * 3.75 + 2 * 15) / 1e6, 12);
  });

  it('turns cache_control breakpoints into cachePoint blocks, and refuses a malformed one before sending', async () => {
    const system = { role: 'system' as const, content: [{ type: 'text' as const, text: 'Long shared instructions.', cache_control: { type: 'ephemeral', ttl: '1h' } }] };
    const tools = [{ ...weatherTool, cache_control: { type: 'ephemeral' } }];
    // The breakpoint fields are not in the openai SDK's types; the request carries them as written.
    const res = await openai.chat.completions.create({ model: 'claude-bedrock', messages: [system, { role: 'user', content: 'Hi' }], tools } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming);
    expect(res.choices[0]?.message.content).toBe('Hello there');
    const sent = bedrock.lastRequest()?.body as { system: unknown[]; toolConfig: { tools: unknown[] } };
    expect(sent.system).toEqual([{ text: 'Long shared instructions.' }, { cachePoint: { type: 'default', ttl: '1h' } }]);
    expect(sent.toolConfig.tools).toEqual([{ toolSpec: expect.objectContaining({ name: 'get_weather' }) }, { cachePoint: { type: 'default' } }]);

    const before = bedrock.verified();
    const bad = { ...system, content: [{ ...system.content[0], cache_control: { type: 'ephemeral', ttl: '1d' } }] };
    const refused = await openai.chat.completions.create({ model: 'claude-bedrock', messages: [bad, { role: 'user', content: 'Hi' }] } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('messages[0].content[0].cache_control.ttl');
    expect(bedrock.verified()).toBe(before);
  });

  it('embeds with a Titan model through signed InvokeModel requests, one per text, billed from its token counts', async () => {
    const before = bedrock.verified();
    const res = await openai.embeddings.create({ model: 'titan-embed', input: ['one two', 'three'], dimensions: 256 }).withResponse();
    expect(bedrock.verified()).toBe(before + 2);
    expect(res.data.data.map((d) => d.embedding.slice(0, 2))).toEqual([
      [7 / 16, 14 / 16],
      [5 / 16, 10 / 16],
    ]);
    expect(res.data.data[0]?.embedding).toHaveLength(256);
    expect(res.data.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
    const { usage, audit } = await recordsOf(res.response.headers.get('x-request-id') as string);
    expect(audit).toHaveLength(1);
    expect(usage).toHaveLength(1);
    expect(usage[0]).toMatchObject({ provider: 'aws', model: 'titan-embed', endpoint: 'embeddings', tokens: { input: 3, output: 0 } });
    expect(usage[0]?.cost_usd).toBeCloseTo((3 * 0.02) / 1e6, 12);
    const refused = await openai.embeddings.create({ model: 'claude-bedrock', input: 'a' }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('model');
  });

  it('authenticates with a Bedrock API key from the providers file, kept out of the records', async () => {
    const before = bedrock.verified();
    const res = await openai.chat.completions.create({ model: 'claude-bedrock-keyed', messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
    expect(res.data.choices[0]?.message.content).toBe('Hello there');
    expect(bedrock.verified()).toBe(before + 1);
    expect(bedrock.lastRequest()?.headers.authorization).toBe(`Bearer ${AWS.apiKey}`);
    const records = await recordsOf(res.response.headers.get('x-request-id') as string);
    expect(records.usage[0]).toMatchObject({ provider: 'aws-keyed', model: 'claude-bedrock-keyed' });
    expect(JSON.stringify(records)).not.toContain(AWS.apiKey);
  });

  it('reaches a model by its inference-profile ARN, streamed', async () => {
    const stream = await openai.chat.completions.create({ model: 'claude-profile', messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Hello there');
    expect(usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 2 });
    expect(bedrock.lastRequest()?.path).toBe(`/model/${encodeURIComponent(ARN)}/converse-stream`);
  });

  it('returns tool calls, whole and streamed', async () => {
    const whole = await openai.chat.completions.create({ model: 'bedrock-tools', messages: [{ role: 'user', content: 'Weather?' }], tools: [weatherTool] });
    expect(whole.choices[0]?.message.tool_calls?.[0]).toMatchObject({ id: 'tooluse_wire1', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } });
    const final = await openai.chat.completions.stream({ model: 'bedrock-tools', messages: [{ role: 'user', content: 'Weather?' }], tools: [weatherTool] }).finalChatCompletion();
    const call = final.choices[0]?.message.tool_calls?.[0];
    expect(call && 'function' in call ? JSON.parse(call.function.arguments) : null).toEqual({ city: 'Paris' });
    expect(final.choices[0]?.finish_reason).toBe('tool_calls');
  });

  it('ends a corrupt event stream with one error event and records what streamed', async () => {
    const res = await fetch(`${h.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key.key },
      body: JSON.stringify({ model: 'bedrock-broken', messages: [{ role: 'user', content: 'Hi' }], stream: true }),
    });
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(text.match(/"error"/g)).toHaveLength(1);
    expect(text).not.toContain('[DONE]');
    const { usage } = await recordsOf(res.headers.get('x-request-id') as string);
    expect(usage).toHaveLength(1);
    expect(usage[0]).toMatchObject({ provider: 'aws', finish_reason: 'error' });
    expect(usage[0]?.tokens.output).toBeGreaterThan(0);
  });
});

describe('reasoning_effort on a Claude model on Bedrock', () => {
  type Thinking = { reasoning_content?: string; thinking_blocks?: { type: string; thinking?: string; signature?: string }[] };
  const question = { role: 'user' as const, content: 'Weather in Paris?' };

  it('turns extended thinking on and gives the signed thought back, whole and streamed', async () => {
    const whole = await openai.chat.completions.create({ model: 'claude-thinking', messages: [question], tools: [weatherTool], reasoning_effort: 'low', temperature: 0.5 }).withResponse();
    expect(whole.response.headers.get('x-gateway-dropped-params')).toBe('temperature');
    const message = whole.data.choices[0]!.message as typeof whole.data.choices[0]['message'] & Thinking;
    expect((message.tool_calls?.[0] as { function?: { name: string } } | undefined)?.function?.name).toBe('get_weather');
    expect(message.reasoning_content).toBe('The user wants the weather in Paris.');
    expect(message.thinking_blocks?.[0]?.type).toBe('thinking');

    const stream = await openai.chat.completions.create({ model: 'claude-thinking', messages: [question], tools: [weatherTool], reasoning_effort: 'low', stream: true });
    let reasoning = '';
    const blocks: unknown[] = [];
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as Thinking | undefined;
      reasoning += delta?.reasoning_content ?? '';
      blocks.push(...(delta?.thinking_blocks ?? []));
    }
    expect(reasoning).toBe('The user wants the weather in Paris.');
    expect(blocks).toEqual(message.thinking_blocks);
  });

  it('keeps thinking on through a tool loop whose client sends the blocks back, and goes on without it when the client does not', async () => {
    const first = (await openai.chat.completions.create({ model: 'claude-thinking', messages: [question], tools: [weatherTool], reasoning_effort: 'low' })).choices[0]!.message as { tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[] } & Thinking;
    const call = first.tool_calls![0]!;
    const loop = (assistant: Record<string, unknown>) => [question, { role: 'assistant', content: null, tool_calls: [call], ...assistant }, { role: 'tool', tool_call_id: call.id, content: 'sunny' }] as never;
    const kept = await openai.chat.completions.create({ model: 'claude-thinking', messages: loop({ thinking_blocks: first.thinking_blocks }), tools: [weatherTool], reasoning_effort: 'low' }).withResponse();
    expect(kept.data.choices[0]!.message.content).toBe('It is sunny.');
    expect(kept.response.headers.get('x-gateway-dropped-params')).toBeNull();
    const without = await openai.chat.completions.create({ model: 'claude-thinking', messages: loop({}), tools: [weatherTool], reasoning_effort: 'low' }).withResponse();
    expect(without.data.choices[0]!.message.content).toBe('It is sunny.');
    expect(without.response.headers.get('x-gateway-dropped-params')).toBe('reasoning_effort');
  });

  it('sends no thinking to a model that is not Claude, and names the effort as dropped', async () => {
    const res = await openai.chat.completions.create({ model: 'claude-bedrock', messages: [question], reasoning_effort: 'low' }).withResponse();
    expect(res.response.headers.get('x-gateway-dropped-params')).toBe('reasoning_effort');
    expect(bedrock.lastRequest()?.body).not.toHaveProperty('additionalModelRequestFields');
  });
});

describe('official SDKs through the gateway to Vertex AI', () => {
  it('openai SDK: a Gemini model, whole and streamed', async () => {
    const res = await openai.chat.completions.create({ model: 'gemini-vertex', messages: [{ role: 'user', content: 'Hi' }] });
    expect(res.choices[0]?.message.content).toBe('Hello there');
    expect(vertex.lastRequest()?.path).toBe(`/v1/projects/${VERTEX_PROJECT}/locations/global/publishers/google/models/gemini-2.5-flash:generateContent`);
    const stream = await openai.chat.completions.create({ model: 'gemini-vertex', messages: [{ role: 'user', content: 'Hi' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('Hello there');
  });

  it('openai SDK: a Claude model through rawPredict, and its tool calls streamed', async () => {
    const res = await openai.chat.completions.create({ model: 'claude-vertex', messages: [{ role: 'user', content: 'Hi' }] });
    expect(res.choices[0]?.message.role).toBe('assistant');
    expect(vertex.lastRequest()?.path).toMatch(/\/publishers\/anthropic\/models\/claude-sonnet-4-5:rawPredict$/);
    const final = await openai.chat.completions.stream({ model: 'claude-vertex-tools', messages: [{ role: 'user', content: 'Weather?' }], tools: [weatherTool] }).finalChatCompletion();
    expect(final.choices[0]?.finish_reason).toBe('tool_calls');
  });

  it('openai SDK: embeddings of a Google embedding model through predict, billed from its token counts', async () => {
    const res = await openai.embeddings.create({ model: 'vertex-embed', input: ['one two', 'three'], dimensions: 4 }).withResponse();
    expect(res.data.data.map((d) => d.embedding)).toEqual([
      [1 / 16, 2 / 16, 3 / 16, 4 / 16],
      [2 / 16, 4 / 16, 6 / 16, 8 / 16],
    ]);
    expect(res.data.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
    expect(vertex.lastRequest()?.path).toMatch(/\/publishers\/google\/models\/text-embedding-005:predict$/);
    const { usage } = await recordsOf(res.response.headers.get('x-request-id') as string);
    expect(usage[0]).toMatchObject({ provider: 'gcp', model: 'vertex-embed', endpoint: 'embeddings', tokens: { input: 3, output: 0 } });
    expect(usage[0]?.cost_usd).toBeCloseTo((3 * 0.025) / 1e6, 12);
    // input_type, outside OpenAI's API, is what the texts are for: Vertex's task_type.
    await openai.embeddings.create({ model: 'vertex-embed', input: 'what is a gateway?', input_type: 'search_query' } as OpenAI.EmbeddingCreateParams);
    expect(vertex.lastRequest()?.body).toEqual({ instances: [{ content: 'what is a gateway?', task_type: 'RETRIEVAL_QUERY' }] });
  });

  it('anthropic SDK: /v1/messages to a Claude model on Vertex is answered natively, whole and streamed', async () => {
    const message = await anthropic.messages.create({ model: 'claude-vertex', max_tokens: 32, messages: [{ role: 'user', content: 'Hi' }] });
    expect(message.type).toBe('message');
    expect(vertex.lastRequest()?.body).toMatchObject({ anthropic_version: 'vertex-2023-10-16', max_tokens: 32 });
    const stream = anthropic.messages.stream({ model: 'claude-vertex', max_tokens: 32, messages: [{ role: 'user', content: 'Hi' }] });
    const final = await stream.finalMessage();
    expect(final.role).toBe('assistant');
    expect(vertex.lastRequest()?.path).toMatch(/:streamRawPredict$/);
    // Fields only Anthropic's API knows, and the client's betas, reach the Claude model as they came.
    await anthropic.messages.create({ model: 'claude-vertex', max_tokens: 32, messages: [{ role: 'user', content: 'Hi' }], context_management: { edits: [] } } as Anthropic.MessageCreateParamsNonStreaming, {
      headers: { 'anthropic-beta': 'context-management-2025-06-27' },
    });
    expect(vertex.lastRequest()?.body).toMatchObject({ context_management: { edits: [] } });
    expect(vertex.lastRequest()?.headers['anthropic-beta']).toBe('context-management-2025-06-27');
  });

  it('anthropic SDK: /v1/messages to Bedrock and to a Gemini model on Vertex, translated', async () => {
    const viaBedrock = await anthropic.messages.create({ model: 'claude-bedrock', max_tokens: 32, messages: [{ role: 'user', content: 'Hi' }] });
    expect(viaBedrock.content[0]).toMatchObject({ type: 'text', text: 'Hello there' });
    expect(viaBedrock.usage.input_tokens).toBeGreaterThan(0);
    const viaGemini = await anthropic.messages.create({ model: 'gemini-vertex', max_tokens: 32, messages: [{ role: 'user', content: 'Hi' }] });
    expect(viaGemini.content[0]).toMatchObject({ type: 'text', text: 'Hello there' });
  });
});

describe('prompt-cache breakpoints of /v1/messages', () => {
  /** Anthropic's own shape: a cached system prompt and tool, and the request's own breakpoint (automatic caching). */
  const marked = {
    max_tokens: 32,
    system: [{ type: 'text' as const, text: 'Long shared instructions.', cache_control: { type: 'ephemeral' as const, ttl: '1h' as const } }],
    tools: [{ name: 'get_weather', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } }, cache_control: { type: 'ephemeral' as const } }],
    messages: [{ role: 'user' as const, content: 'Hi' }],
    cache_control: { type: 'ephemeral' },
  };

  it('reach Bedrock as cachePoint blocks', async () => {
    const message = await anthropic.messages.create({ ...marked, model: 'claude-bedrock' } as Anthropic.MessageCreateParamsNonStreaming);
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'Hello there' });
    const sent = bedrock.lastRequest()?.body as { system: unknown[]; messages: { content: unknown[] }[]; toolConfig: { tools: unknown[] } };
    expect(sent.system).toEqual([{ text: 'Long shared instructions.' }, { cachePoint: { type: 'default', ttl: '1h' } }]);
    expect(sent.toolConfig.tools).toEqual([{ toolSpec: expect.objectContaining({ name: 'get_weather' }) }, { cachePoint: { type: 'default' } }]);
    expect(sent.messages[0]?.content).toEqual([{ text: 'Hi' }, { cachePoint: { type: 'default' } }]);
  });

  it('never reach an OpenAI-typed provider, which is sent the plain translation', async () => {
    const before = vllm.requests();
    await anthropic.messages.create({ ...marked, model: 'llama' } as Anthropic.MessageCreateParamsNonStreaming);
    expect(vllm.requests()).toBe(before + 1);
    const sent = vllm.lastRequest()?.body as { messages: unknown[]; tools: unknown[] };
    expect(JSON.stringify(sent)).not.toContain('cache_control');
    expect(sent.messages).toEqual([{ role: 'system', content: 'Long shared instructions.' }, { role: 'user', content: 'Hi' }]);
    expect(sent.tools).toHaveLength(1);
  });
});

describe('failover across cloud providers', () => {
  for (const [model, why] of [
    ['shared-busy', 'throttles (429)'],
    ['shared-down', 'is unavailable (503)'],
  ] as const) {
    it(`serves from Vertex when Bedrock ${why}, with one audit event and one usage record`, async () => {
      const res = await openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
      expect(res.data.choices[0]?.message.content).toBe('Hello there');
      const { audit, usage } = await recordsOf(res.response.headers.get('x-request-id') as string);
      expect(audit).toHaveLength(1);
      expect(audit[0]).toMatchObject({ outcome: 'success', provider: 'gcp', attempts: 2, providers: ['aws', 'gcp'] });
      expect(usage).toHaveLength(1);
      expect(usage[0]).toMatchObject({ provider: 'gcp' });
    });
  }

  it('serves embeddings from Vertex when Bedrock throttles them', async () => {
    const res = await openai.embeddings.create({ model: 'shared-embed', input: ['one', 'two'] }).withResponse();
    expect(res.data.data).toHaveLength(2);
    const { audit, usage } = await recordsOf(res.response.headers.get('x-request-id') as string);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ outcome: 'success', provider: 'gcp', attempts: 2, providers: ['aws', 'gcp'], endpoint: 'embeddings' });
    expect(usage).toHaveLength(1);
    expect(usage[0]).toMatchObject({ provider: 'gcp', endpoint: 'embeddings', tokens: { input: 2 } });
  });

  it('fails a stream over when Bedrock throttles it before the first chunk', async () => {
    const stream = await openai.chat.completions.create({ model: 'shared-throttled-stream', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('Hello there');
  });
});

describe('access-denied errors of the clouds', () => {
  /** What identifies the operator's cloud accounts in the two refusals. */
  const IDENTIFIERS = ['123456789012', 'GatewayInvokeRole', 'arn:aws', VERTEX_PROJECT, VERTEX_PROJECT_NUMBER, 'gserviceaccount.com'];

  async function refused(path: string, body: Record<string, unknown>): Promise<{ status: number; text: string; requestId: string }> {
    const res = await fetch(`${h.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key.key, 'anthropic-version': '2023-06-01' }, body: JSON.stringify(body) });
    return { status: res.status, text: await res.text(), requestId: res.headers.get('x-request-id') as string };
  }

  it('reach the client without ARNs, account, project or service account, whole and streamed, in both protocols; the log keeps them', async () => {
    const logged = vi.spyOn(h.proxy.deps.log, 'warn');
    try {
      const answers = [
        await refused('/v1/chat/completions', { model: 'bedrock-denied', messages: [{ role: 'user', content: 'Hi' }] }),
        await refused('/v1/chat/completions', { model: 'bedrock-denied', messages: [{ role: 'user', content: 'Hi' }], stream: true }),
        await refused('/v1/messages', { model: 'bedrock-denied', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }),
        await refused('/v1/chat/completions', { model: 'vertex-denied', messages: [{ role: 'user', content: 'Hi' }] }),
        await refused('/v1/chat/completions', { model: 'vertex-denied', messages: [{ role: 'user', content: 'Hi' }], stream: true }),
        await refused('/v1/messages', { model: 'vertex-denied', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }),
      ];
      for (const answer of answers) {
        expect(answer.status, answer.text).toBe(502);
        for (const identifier of IDENTIFIERS) expect(answer.text).not.toContain(identifier);
      }
      // Still readable: what was refused, with placeholders where the identifiers were.
      const bedrockMessage = (JSON.parse(answers[0]!.text) as { error: { message: string; code: string } }).error;
      expect(bedrockMessage.code).toBe('UPSTREAM_ERROR');
      expect(bedrockMessage.message).toBe(
        "Provider aws refused the gateway's credentials or model access: User: <arn> is not authorized to perform: bedrock:InvokeModel on resource: <arn> because no identity-based policy allows the bedrock:InvokeModel action",
      );
      const vertexMessage = (JSON.parse(answers[3]!.text) as { error: { message: string } }).error.message;
      expect(vertexMessage).toContain("does not allow the gateway's service account this request (403: Permission 'aiplatform.endpoints.predict' denied on resource '//aiplatform.googleapis.com/projects/<gcp-project>/locations/global/");
      expect(vertexMessage).toContain('for <service-account> in project <gcp-project>');
      expect((JSON.parse(answers[2]!.text) as { type: string; error: { message: string } }).error.message).toContain('User: <arn> is not authorized');

      // The operator's log line of each refusal has the provider's words as they were, and no secret.
      const lines = logged.mock.calls.map((call) => call[0] as Record<string, unknown>);
      for (const [i, answer] of answers.entries()) {
        expect(lines.find((l) => l.request_id === answer.requestId)).toMatchObject({
          provider: i < 3 ? 'aws' : 'gcp',
          code: 'UPSTREAM_ERROR',
          status: 502,
          provider_message: i < 3 ? BEDROCK_ACCESS_DENIED : VERTEX_PERMISSION_DENIED,
        });
      }
      const all = JSON.stringify(logged.mock.calls);
      for (const secret of [AWS.secretAccessKey, AWS.sessionToken, AWS.apiKey, 'ya29.']) expect(all).not.toContain(secret);
    } finally {
      logged.mockRestore();
    }
  });
});

describe('an OpenAI-compatible preset', () => {
  it('sends the token limit in the preset’s field', async () => {
    await openai.chat.completions.create({ model: 'llama', messages: [{ role: 'user', content: 'hi' }], max_completion_tokens: 10 });
    const body = vllm.lastRequest()?.body as Record<string, unknown>;
    expect(body.max_tokens).toBe(10);
    expect(body.max_completion_tokens).toBeUndefined();
  });
});

describe('secrets', () => {
  it('keeps the AWS secret, session token, Bedrock API key and Vertex access tokens out of every record', async () => {
    const { raw } = await h.records();
    const all = raw.join('\n');
    expect(all).not.toContain(AWS.secretAccessKey);
    expect(all).not.toContain(AWS.sessionToken);
    expect(all).not.toContain(AWS.apiKey);
    expect(all).not.toContain('ya29.');
  });
});
