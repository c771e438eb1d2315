import type { ServerResponse } from 'node:http';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectTestKey, type TestKey } from '../../test-support/redis.js';
import { startWireMock, type RunningWireMock, type WireRequest } from '../../test-support/wire-mock.js';
import { answerAnthropic, signThinking } from './anthropic-thinking-answer.js';
import { startHarness, type Harness } from './harness.js';

/**
 * `reasoning_effort` from the official openai SDK's Chat Completions, translated to Claude's
 * extended thinking, against a mock that answers and refuses thinking as Anthropic does: the
 * thought comes back as `reasoning_content` and `thinking_blocks`, whole or streamed; a tool loop
 * whose client sends the blocks back keeps thinking on, one whose client does not goes on without
 * it and is told so in `x-gateway-dropped-params`, and nothing reaches Anthropic that it refuses.
 */
const THOUGHT = 'The user wants the weather in Paris.';
const seen: WireRequest[] = [];
let upstream: RunningWireMock;
let h: Harness;
let key: TestKey;
let client: OpenAI;

function claudeAnswer(req: WireRequest, res: ServerResponse): void {
  seen.push(req);
  const last = ((req.body.messages ?? []) as { content: unknown }[]).at(-1)?.content;
  const result = Array.isArray(last) ? (last as { type: string; content?: unknown }[]).find((b) => b.type === 'tool_result') : undefined;
  if (result === undefined) return answerAnthropic(req, res, { call: { id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } } }, THOUGHT);
  answerAnthropic(req, res, { text: `It is ${String(result.content)}.` }, 'Say it.');
}

beforeAll(async () => {
  upstream = await startWireMock(claudeAnswer);
  h = await startHarness(
    'anthropic-thinking',
    `providers:
  - name: claude
    type: anthropic
    base_url: ${upstream.baseUrl}
    api_key: sk-ant-provider-secret-0123456789
    models: [claude-1]
`,
  );
  key = await projectTestKey(h.redis, h.keys);
  client = new OpenAI({ apiKey: key.key, baseURL: `${h.url}/v1`, maxRetries: 0 });
});

afterAll(async () => {
  await h?.stop();
  await upstream?.close();
});

const tools: OpenAI.Chat.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
const question: OpenAI.Chat.ChatCompletionMessageParam = { role: 'user', content: 'Weather in Paris?' };

type ThinkingMessage = OpenAI.Chat.ChatCompletionMessage & { reasoning_content?: string; thinking_blocks?: unknown[] };

describe('reasoning_effort on Claude through the gateway', () => {
  it('turns thinking on and gives the thought back as reasoning_content and thinking_blocks', async () => {
    const completion = await client.chat.completions.create({ model: 'claude-1', messages: [question], tools, reasoning_effort: 'medium', temperature: 0.2 }).withResponse();
    expect(seen.at(-1)!.body).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 8192 } });
    expect(seen.at(-1)!.body).not.toHaveProperty('temperature');
    expect(completion.response.headers.get('x-gateway-dropped-params')).toBe('temperature');
    const message = completion.data.choices[0]!.message as ThinkingMessage;
    expect(message.tool_calls?.[0]).toMatchObject({ id: 'toolu_1', function: { name: 'get_weather' } });
    expect(message.reasoning_content).toBe(THOUGHT);
    expect(message.thinking_blocks).toEqual([{ type: 'thinking', thinking: THOUGHT, signature: signThinking(THOUGHT) }]);
  });

  it('streams the thought as reasoning_content deltas, then the block whole', async () => {
    const stream = await client.chat.completions.create({ model: 'claude-1', messages: [question], tools, reasoning_effort: 'low', stream: true });
    let reasoning = '';
    const blocks: unknown[] = [];
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as { reasoning_content?: string; thinking_blocks?: unknown[] } | undefined;
      reasoning += delta?.reasoning_content ?? '';
      blocks.push(...(delta?.thinking_blocks ?? []));
    }
    expect(reasoning).toBe(THOUGHT);
    expect(blocks).toEqual([{ type: 'thinking', thinking: THOUGHT, signature: signThinking(THOUGHT) }]);
  });

  it('keeps thinking on through a tool loop whose client sends thinking_blocks back', async () => {
    const first = (await client.chat.completions.create({ model: 'claude-1', messages: [question], tools, reasoning_effort: 'low' })).choices[0]!.message as ThinkingMessage;
    const call = first.tool_calls![0]!;
    const loop = [question, { role: 'assistant', content: null, tool_calls: [call], thinking_blocks: first.thinking_blocks }, { role: 'tool', tool_call_id: call.id, content: 'sunny' }] as OpenAI.Chat.ChatCompletionMessageParam[];
    const second = await client.chat.completions.create({ model: 'claude-1', messages: loop, tools, reasoning_effort: 'low' }).withResponse();
    expect(second.data.choices[0]!.message.content).toBe('It is sunny.');
    expect(second.response.headers.get('x-gateway-dropped-params')).toBeNull();
    const assistant = (seen.at(-1)!.body.messages as { content: unknown[] }[])[1];
    expect(assistant?.content[0]).toEqual({ type: 'thinking', thinking: THOUGHT, signature: signThinking(THOUGHT) });
  });

  it('goes on without thinking, and says so, when the client of a tool loop does not send the blocks back', async () => {
    const loop = [question, { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] }, { role: 'tool', tool_call_id: 'toolu_1', content: 'sunny' }] as OpenAI.Chat.ChatCompletionMessageParam[];
    const second = await client.chat.completions.create({ model: 'claude-1', messages: loop, tools, reasoning_effort: 'low' }).withResponse();
    expect(second.data.choices[0]!.message.content).toBe('It is sunny.');
    expect(second.response.headers.get('x-gateway-dropped-params')).toBe('reasoning_effort');
    expect(seen.at(-1)!.body).not.toHaveProperty('thinking');
  });

  it('asks for no thinking when the tool choice forces a tool, and says so', async () => {
    const forced = await client.chat.completions.create({ model: 'claude-1', messages: [question], tools, tool_choice: 'required', reasoning_effort: 'high' }).withResponse();
    expect(forced.response.headers.get('x-gateway-dropped-params')).toBe('reasoning_effort');
    expect(seen.at(-1)!.body).not.toHaveProperty('thinking');
    expect(seen.at(-1)!.body.tool_choice).toEqual({ type: 'any' });
  });
});
