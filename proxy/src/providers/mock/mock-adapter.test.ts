import { describe, expect, it } from 'vitest';
import { estimatePromptTokens } from '../../policy/token-estimate.js';
import type { ChatRequest, ChatCompletionBody } from '../adapter.js';
import { Cancel } from '../cancel.js';
import { runAdapterConformance } from '../conformance.case.js';
import { base64ToFloats } from '../embeddings-answer.js';
import { embeddingsRequest, parseAnswer } from '../embeddings-request.case.js';
import { MockAdapter } from './mock-adapter.js';
import { MOCK_EMBEDDING_DIMENSIONS, MOCK_MAX_DIMENSIONS } from './mock-embeddings.js';
import { countPromptTokens, countTokens, MOCK_IMAGE_TOKENS, tokenize } from './mock-tokens.js';

function mock(chunks = 20, gapMs = 1): MockAdapter {
  return new MockAdapter({
    name: 'mock',
    type: 'mock',
    base_url: null,
    api_key: null,
    models: [{ id: 'mock-1', upstream: 'mock-1', price: null }],
    connect_timeout_ms: 1000,
    timeout_ms: 1000,
    idle_timeout_ms: 1000,
    max_connections: 1,
    max_queued: 1,
    options: { chunks, gap_ms: gapMs },
  });
}

runAdapterConformance('mock', () => ({ model: 'mock-1', adapter: () => mock() }));

interface Message {
  role: string;
  content: string | null;
  tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
}
interface Completion {
  choices: { message: Message; finish_reason: string }[];
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}
interface Chunk {
  choices: { index: number; delta: Record<string, unknown>; finish_reason: string | null }[];
  usage?: Completion['usage'];
}

function request(body: Record<string, unknown>, stream = false): ChatRequest {
  const full = { model: 'mock-1', ...body, ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) } as ChatCompletionBody;
  return { body: full, raw: Buffer.from(JSON.stringify(full)), model: 'mock-1', upstreamModel: 'mock-1', stream, clientWantsUsage: stream, requestId: 'req-1' };
}

async function complete(body: Record<string, unknown>): Promise<Completion> {
  const result = await mock().complete(request(body));
  const parsed = JSON.parse(result.body.toString('utf8')) as Completion;
  // What the gateway bills is what the body says.
  expect(result.usage).toEqual({ input: parsed.usage.prompt_tokens, output: parsed.usage.completion_tokens });
  return parsed;
}

/** Streams `body` and puts the answer back together the way an OpenAI client does. */
async function streamed(body: Record<string, unknown>, chunks = 20): Promise<{ message: Message; finish: string | null; usage: Completion['usage'] | undefined; chunks: Chunk[] }> {
  const { meta, events } = await mock(chunks, 0).stream(request(body, true), new Cancel());
  const all: Chunk[] = [];
  let content: string | null = null;
  const calls: NonNullable<Message['tool_calls']> = [];
  let finish: string | null = null;
  let usage: Completion['usage'] | undefined;
  for await (const data of events) {
    const chunk = JSON.parse(data) as Chunk;
    all.push(chunk);
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices[0];
    if (!choice) continue;
    if (typeof choice.delta.content === 'string') content = (content ?? '') + choice.delta.content;
    for (const d of (choice.delta.tool_calls as { index: number; id?: string; type?: string; function?: { name?: string; arguments?: string } }[] | undefined) ?? []) {
      const call = (calls[d.index] ??= { id: '', type: '', function: { name: '', arguments: '' } });
      if (d.id) call.id = d.id;
      if (d.type) call.type = d.type;
      call.function.name += d.function?.name ?? '';
      call.function.arguments += d.function?.arguments ?? '';
    }
    finish = choice.finish_reason ?? finish;
  }
  expect(meta.usage).toEqual({ input: usage?.prompt_tokens, output: usage?.completion_tokens });
  expect(meta.estimatedOutput).toBe(usage?.completion_tokens);
  const message: Message = { role: 'assistant', content: calls.length > 0 ? null : content };
  if (calls.length > 0) message.tool_calls = calls;
  return { message, finish, usage, chunks: all };
}

/** Whole and streamed answers must agree, and usage must count what was answered. */
async function both(body: Record<string, unknown>): Promise<Completion> {
  const whole = await complete(body);
  const stream = await streamed(body);
  const choice = whole.choices[0]!;
  expect(stream.message.content).toBe(choice.message.content);
  expect(stream.message.tool_calls).toEqual(choice.message.tool_calls);
  expect(stream.finish).toBe(choice.finish_reason);
  expect(stream.usage).toEqual(whole.usage);
  expect(whole.usage.prompt_tokens).toBe(countPromptTokens({ model: 'mock-1', ...body }));
  const call = choice.message.tool_calls?.[0];
  expect(whole.usage.completion_tokens).toBe(call ? 1 + countTokens(call.function.arguments) : countTokens(choice.message.content ?? ''));
  expect(whole.usage.total_tokens).toBe(whole.usage.prompt_tokens + whole.usage.completion_tokens);
  return whole;
}

const say = (content: unknown) => ({ messages: [{ role: 'user', content }] });

const weather = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather in a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] }, days: { type: 'integer', minimum: 1 }, detailed: { type: 'boolean' } },
      required: ['city', 'unit', 'days'],
    },
  },
};
const search = { type: 'function', function: { name: 'search', parameters: { type: 'object', properties: { query: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } }, required: ['query', 'tags'] } } };

describe('mock tokens', () => {
  it('cuts text into words, digit groups, punctuation runs and single other characters', () => {
    expect(tokenize('Hello, world! 12345 {"a":1} café 我们😀')).toEqual(['Hello', ',', ' world', '!', ' 123', '45', ' {"', 'a', '":', '1', '}', ' caf', 'é', ' 我', '们', '😀']);
    expect(countTokens('  trailing space  ')).toBe(2);
  });

  it('never counts more prompt tokens than the gateway reserves for them', () => {
    const bodies = [say('Hello'), say('Say hello to me'), say('人工智能是计算机科学的一个分支'), say('{"json": [1, 2, 3], "nested": {"a": "b"}}'), { ...say('Weather in Paris?'), tools: [weather, search] }];
    for (const body of bodies) expect(countPromptTokens(body)).toBeLessThanOrEqual(estimatePromptTokens(body));
  });
});

describe('mock answers', () => {
  it('honours max_tokens: cut to that many tokens, finish_reason "length"', async () => {
    const whole = await both({ ...say('Tell me a long story about dragons'), max_tokens: 2 });
    expect(whole.choices[0]?.message.content).toBe('This is');
    expect(whole.choices[0]?.finish_reason).toBe('length');
    expect(whole.usage.completion_tokens).toBe(2);
  });

  it('prefers max_completion_tokens, and says "stop" when the answer fits', async () => {
    expect((await both({ ...say('hi'), max_tokens: 1, max_completion_tokens: 5 })).usage.completion_tokens).toBe(5);
    const fits = await both({ ...say('hi'), max_tokens: 100 });
    expect(fits.choices[0]?.finish_reason).toBe('stop');
    expect(fits.usage.completion_tokens).toBeLessThan(100);
  });

  it('cuts before the first stop sequence', async () => {
    const whole = await both({ ...say('apples and pears'), stop: ['pears', 'mock'] });
    expect(whole.choices[0]?.message.content).toBe("This is the gateway's built-in");
    expect(whole.choices[0]?.finish_reason).toBe('stop');
    const single = await both({ ...say('apples and pears'), stop: ' and' });
    expect(single.choices[0]?.message.content).toBe("This is the gateway's built-in mock provider. You said: apples");
  });

  it('reads text parts and acknowledges images', async () => {
    const body = say([
      { type: 'text', text: 'What is in' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
      { type: 'text', text: 'this picture?' },
    ]);
    const whole = await both(body);
    expect(whole.choices[0]?.message.content).toBe("This is the gateway's built-in mock provider. You said: What is in [image] this picture?");
    expect(whole.usage.prompt_tokens).toBe(3 + 3 + countTokens('What is in') + MOCK_IMAGE_TOKENS + countTokens('this picture?'));
  });

  it('calls the tool tool_choice "required" asks for, with arguments for every required property', async () => {
    const whole = await both({ ...say('Is it raining?'), tools: [weather, search], tool_choice: 'required' });
    const choice = whole.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toHaveLength(1);
    const call = choice.message.tool_calls![0]!;
    expect(call.type).toBe('function');
    expect(call.id).toMatch(/^call_/);
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'example city', unit: 'celsius', days: 1 });
  });

  it('calls the function tool_choice names, or the tool the user names', async () => {
    const named = await both({ ...say('Is it raining?'), tools: [weather, search], tool_choice: { type: 'function', function: { name: 'search' } } });
    expect(named.choices[0]?.message.tool_calls?.[0]?.function).toEqual({ name: 'search', arguments: '{"query":"example query","tags":["example tags"]}' });
    const mentioned = await both({ ...say('Please use search to find the docs'), tools: [weather, search] });
    expect(mentioned.choices[0]?.message.tool_calls?.[0]?.function.name).toBe('search');
    const required = await both({ ...say('Please use search'), tools: [weather, search], tool_choice: 'required' });
    expect(required.choices[0]?.message.tool_calls?.[0]?.function.name).toBe('search');
  });

  it('answers with text when no tool is asked for, tool_choice is "none", or the last message is a tool result', async () => {
    expect((await both({ ...say('Is it raining?'), tools: [weather] })).choices[0]?.finish_reason).toBe('stop');
    expect((await both({ ...say('use get_weather'), tools: [weather], tool_choice: 'none' })).choices[0]?.message.tool_calls).toBeUndefined();
    const afterTool = await both({
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: '{"temperature":21}' },
      ],
      tools: [weather],
      tool_choice: 'required',
    });
    expect(afterTool.choices[0]?.finish_reason).toBe('stop');
    expect(afterTool.choices[0]?.message.content).toBe('The get_weather tool returned: {"temperature":21}');
  });

  it('cuts a tool call at max_tokens in its arguments', async () => {
    const whole = await both({ ...say('x'), tools: [weather], tool_choice: 'required', max_tokens: 3 });
    expect(whole.choices[0]?.finish_reason).toBe('length');
    expect(whole.usage.completion_tokens).toBe(3);
    expect(whole.choices[0]?.message.tool_calls?.[0]?.function.arguments).toBe('{"city');
  });

  it('streams a tool call in OpenAI\'s delta format', async () => {
    const { chunks, usage } = await streamed({ ...say('x'), tools: [weather], tool_choice: 'required' }, 4);
    expect(chunks[0]?.choices[0]?.delta).toEqual({ role: 'assistant', content: null });
    expect(chunks[1]?.choices[0]?.delta).toEqual({ tool_calls: [{ index: 0, id: 'call_mock_1_0', type: 'function', function: { name: 'get_weather', arguments: '' } }] });
    const argumentDeltas = chunks.slice(2, -2).map((c) => c.choices[0]?.delta);
    expect(argumentDeltas.length).toBe(4);
    for (const d of argumentDeltas) expect(d).toEqual({ tool_calls: [{ index: 0, function: { arguments: expect.any(String) } }] });
    expect(chunks.at(-2)?.choices[0]).toMatchObject({ delta: {}, finish_reason: 'tool_calls' });
    expect(chunks.at(-1)?.choices).toEqual([]);
    expect(usage?.completion_tokens).toBeGreaterThan(1);
  });

  it('answers the same body the same way every time', async () => {
    const body = { ...say('same'), tools: [weather], tool_choice: 'required' };
    const a = await complete(body);
    const b = await complete(body);
    expect(b.choices).toEqual(a.choices);
    expect(b.usage).toEqual(a.usage);
  });
});

describe('mock embeddings', () => {
  const embed = async (body: Record<string, unknown>) => {
    const result = await mock().embed(embeddingsRequest('mock-1', body));
    return { answer: parseAnswer(result.body), usage: result.usage };
  };
  const norm = (v: number[]) => Math.sqrt(v.reduce((a, x) => a + x * x, 0));

  it('answers one unit vector of 8 float32 values per input, the same every time, different per text', async () => {
    const { answer } = await embed({ input: ['hello', 'world', 'hello'] });
    expect(answer).toMatchObject({ object: 'list', model: 'mock-1' });
    const vectors = answer.data.map((d) => d.embedding as number[]);
    expect(answer.data.map((d) => [d.object, d.index])).toEqual([['embedding', 0], ['embedding', 1], ['embedding', 2]]);
    for (const v of vectors) {
      expect(v).toHaveLength(MOCK_EMBEDDING_DIMENSIONS);
      expect(norm(v)).toBeCloseTo(1, 5);
      for (const x of v) expect(Math.fround(x)).toBe(x);
    }
    expect(vectors[2]).toEqual(vectors[0]);
    expect(vectors[1]).not.toEqual(vectors[0]);
    expect((await embed({ input: 'hello' })).answer.data[0]?.embedding).toEqual(vectors[0]);
  });

  it('honours dimensions up to its maximum, and refuses more naming dimensions', async () => {
    expect((await embed({ input: 'x', dimensions: 3 })).answer.data[0]?.embedding).toHaveLength(3);
    expect((await embed({ input: 'x', dimensions: 1536 })).answer.data[0]?.embedding).toHaveLength(1536);
    await expect(embed({ input: 'x', dimensions: MOCK_MAX_DIMENSIONS + 1 })).rejects.toMatchObject({ code: 'INVALID_REQUEST', param: 'dimensions' });
  });

  it('gives in base64 exactly the floats it gives as floats', async () => {
    const floats = (await embed({ input: ['a b', 'c'], encoding_format: 'float' })).answer.data.map((d) => d.embedding);
    const base64 = (await embed({ input: ['a b', 'c'], encoding_format: 'base64' })).answer.data.map((d) => d.embedding as string);
    expect(base64.map(base64ToFloats)).toEqual(floats);
  });

  it("bills the mock's tokens of each text, and one per token id", async () => {
    const texts = await embed({ input: ['Hello, world!', 'one two three'] });
    expect(texts.usage.input).toBe(countTokens('Hello, world!') + countTokens('one two three'));
    expect(texts.answer.usage).toEqual({ prompt_tokens: texts.usage.input, total_tokens: texts.usage.input });
    expect((await embed({ input: [[1, 2, 3], [4, 5]] })).usage.input).toBe(5);
    expect((await embed({ input: [7, 8, 9, 10] })).usage.input).toBe(4);
    expect((await embed({ input: [7, 8, 9, 10] })).answer.data).toHaveLength(1);
  });
});
