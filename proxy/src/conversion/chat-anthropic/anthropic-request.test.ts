import { GatewayError } from '@gateway/shared';
import { describe, expect, it } from 'vitest';
import { toAnthropicRequest } from './anthropic-request.js';

const settings = { upstreamModel: 'claude-haiku-4-5', stream: false, defaultMaxTokens: 4096 };
const user = { role: 'user', content: 'Hi' };

function translate(body: Record<string, unknown>, overrides: Partial<typeof settings> = {}) {
  return toAnthropicRequest({ model: 'gw-model', messages: [user], ...body }, { ...settings, ...overrides });
}

function refusal(body: Record<string, unknown>): GatewayError {
  try {
    translate(body);
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).code).toBe('INVALID_REQUEST');
    return err as GatewayError;
  }
  throw new Error('expected a refusal');
}

describe('OpenAI chat request → Anthropic Messages request', () => {
  it('sends the upstream model and the default max_tokens when the client set none', () => {
    expect(translate({})).toEqual({ model: 'claude-haiku-4-5', max_tokens: 4096, messages: [{ role: 'user', content: 'Hi' }] });
    expect(translate({}, { defaultMaxTokens: 100 }).max_tokens).toBe(100);
  });

  it('takes max_completion_tokens over max_tokens', () => {
    expect(translate({ max_tokens: 50 }).max_tokens).toBe(50);
    expect(translate({ max_tokens: 50, max_completion_tokens: 70 }).max_tokens).toBe(70);
  });

  it('lifts system and developer messages into the top-level system', () => {
    expect(translate({ messages: [{ role: 'system', content: 'Be brief.' }, user] }).system).toBe('Be brief.');
    const out = translate({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Use French.' }] },
        user,
      ],
    });
    expect(out.system).toEqual([
      { type: 'text', text: 'Be brief.' },
      { type: 'text', text: 'Use French.' },
    ]);
    expect(out.messages).toEqual([{ role: 'user', content: 'Hi' }]);
  });

  it('refuses a system message with a part other than text, naming it', () => {
    const err = refusal({ messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }, user] });
    expect(err.param).toBe('messages[0].content[0]');
  });

  it('translates text and image parts: data URLs as base64, http(s) URLs as url sources', () => {
    const out = translate({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'high' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
          ],
        },
      ],
    });
    expect(out.messages[0]?.content).toEqual([
      { type: 'text', text: 'What is this?' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
    ]);
  });

  it('translates a PDF file part into a document block and refuses other parts with their path', () => {
    const out = translate({ messages: [{ role: 'user', content: [{ type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } }] }] });
    expect(out.messages[0]?.content).toEqual([{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } }]);
    expect(refusal({ messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }, { type: 'input_audio', input_audio: { data: 'AA', format: 'wav' } }] }] }).param).toBe('messages[0].content[1]');
    expect(refusal({ messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-1' } }] }] }).param).toBe('messages[0].content[0].file');
    expect(refusal({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x/y.png' } }] }] }).param).toBe('messages[0].content[0].image_url');
  });

  it('turns assistant tool calls into tool_use blocks with parsed input, after the text', () => {
    const out = translate({
      messages: [
        user,
        {
          role: 'assistant',
          content: 'Let me look.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'Sunny' },
        { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: 'Noon' }] },
      ],
    });
    expect(out.messages).toEqual([
      { role: 'user', content: 'Hi' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me look.' },
          { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'call_2', name: 'get_time', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: 'Sunny' },
          { type: 'tool_result', tool_use_id: 'call_2', content: [{ type: 'text', text: 'Noon' }] },
        ],
      },
    ]);
  });

  it('sends a tool-calling assistant message with null or empty content as tool_use blocks only', () => {
    const call = { id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } };
    for (const content of [null, '']) {
      const out = translate({ messages: [user, { role: 'assistant', content, tool_calls: [call] }] });
      expect(out.messages[1]).toEqual({ role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'f', input: {} }] });
    }
  });

  it('refuses tool call arguments that are not a JSON object, naming the call', () => {
    const call = (args: string) => ({ messages: [user, { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: args } }] }] });
    expect(refusal(call('{"city":')).param).toBe('messages[1].tool_calls[0].function.arguments');
    expect(refusal(call('[1,2]')).param).toBe('messages[1].tool_calls[0].function.arguments');
    expect(refusal({ messages: [user, { role: 'tool', content: 'x' }] }).param).toBe('messages[1].tool_call_id');
  });

  it('merges consecutive turns of one role so that user and assistant alternate', () => {
    const out = translate({
      messages: [
        { role: 'user', content: 'One' },
        { role: 'user', content: [{ type: 'text', text: 'Two' }] },
        { role: 'assistant', content: 'A' },
        { role: 'assistant', content: 'B' },
        { role: 'tool', tool_call_id: 'c', content: 'result' },
        { role: 'user', content: 'Thanks' },
      ],
    });
    expect(out.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'One' }, { type: 'text', text: 'Two' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'A' }, { type: 'text', text: 'B' }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c', content: 'result' }, { type: 'text', text: 'Thanks' }] },
    ]);
  });

  it('translates tools into name, description and input_schema', () => {
    const parameters = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    const out = translate({
      tools: [
        { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters, strict: true } },
        { type: 'function', function: { name: 'ping' } },
      ],
    });
    expect(out.tools).toEqual([
      { name: 'get_weather', description: 'Weather', input_schema: parameters },
      { name: 'ping', input_schema: { type: 'object', properties: {} } },
    ]);
    expect(out.tool_choice).toBeUndefined();
    expect(refusal({ tools: [{ type: 'custom', custom: { name: 'x' } }] }).param).toBe('tools[0]');
  });

  it('maps tool_choice and parallel_tool_calls', () => {
    const tools = [{ type: 'function', function: { name: 'f' } }];
    expect(translate({ tools, tool_choice: 'auto' }).tool_choice).toEqual({ type: 'auto' });
    expect(translate({ tools, tool_choice: 'required' }).tool_choice).toEqual({ type: 'any' });
    expect(translate({ tools, tool_choice: 'none' }).tool_choice).toEqual({ type: 'none' });
    expect(translate({ tools, tool_choice: { type: 'function', function: { name: 'f' } } }).tool_choice).toEqual({ type: 'tool', name: 'f' });
    expect(translate({ tools, parallel_tool_calls: false }).tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true });
    expect(translate({ tools, tool_choice: 'required', parallel_tool_calls: false }).tool_choice).toEqual({ type: 'any', disable_parallel_tool_use: true });
    expect(translate({ tools, tool_choice: 'none', parallel_tool_calls: false }).tool_choice).toEqual({ type: 'none' });
    expect(translate({ tools, parallel_tool_calls: true }).tool_choice).toBeUndefined();
    expect(refusal({ tools, tool_choice: 'sometimes' }).param).toBe('tool_choice');
  });

  it('maps stop, top_p, user and stream', () => {
    expect(translate({ stop: 'END' }).stop_sequences).toEqual(['END']);
    expect(translate({ stop: ['A', 'B'] }).stop_sequences).toEqual(['A', 'B']);
    const out = translate({ top_p: 0.9, user: 'user-42' }, { stream: true });
    expect(out).toMatchObject({ top_p: 0.9, metadata: { user_id: 'user-42' }, stream: true });
    expect(translate({}).stream).toBeUndefined();
  });

  it('clamps temperature to Anthropic’s 0–1 range, leaving values inside it as they are', () => {
    expect(translate({ temperature: 0 }).temperature).toBe(0);
    expect(translate({ temperature: 0.7 }).temperature).toBe(0.7);
    expect(translate({ temperature: 1 }).temperature).toBe(1);
    expect(translate({ temperature: 1.6 }).temperature).toBe(1);
    expect(translate({ temperature: 2 }).temperature).toBe(1);
  });

  it('no longer refuses what Anthropic cannot honour: that is judged at admission, and the fields are left out', () => {
    // anthropic-params.ts refuses or drops these before the adapter runs; the translation maps only what it carries.
    const plain = { model: 'claude-haiku-4-5', max_tokens: 4096, messages: [{ role: 'user', content: 'Hi' }] };
    const cases: Record<string, unknown>[] = [
      { n: 2 },
      { logprobs: true },
      { top_logprobs: 3 },
      { response_format: { type: 'json_object' } },
      { presence_penalty: 0.5 },
      { frequency_penalty: -1 },
      { logit_bias: { '50256': -100 } },
      { seed: 7 },
      { verbosity: 'low' },
      { prompt_cache_key: 'k' },
      { functions: [{ name: 'f' }] },
      { function_call: 'auto' },
      { audio: { voice: 'alloy', format: 'mp3' } },
      { modalities: ['text', 'audio'] },
      { web_search_options: {} },
      { foo_bar: 1 },
    ];
    for (const body of cases) expect(translate(body)).toEqual(plain);
  });

  it('maps a json_schema response_format to output_config.format, and leaves JSON mode without a schema unmapped', () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
    const out = translate({ response_format: { type: 'json_schema', json_schema: { name: 'answer', strict: true, schema } } });
    expect(out.output_config).toEqual({ format: { type: 'json_schema', schema } });
    expect(out).not.toHaveProperty('response_format');
    expect(translate({ response_format: { type: 'json_object' } }).output_config).toBeUndefined();
    expect(translate({ response_format: { type: 'text' } }).output_config).toBeUndefined();
    expect(translate({ response_format: { type: 'json_schema', json_schema: { name: 'no-schema' } } }).output_config).toBeUndefined();
  });

  it('accepts those fields at their no-op values, and drops fields Anthropic does not know', () => {
    const out = translate({
      n: 1,
      logprobs: false,
      top_logprobs: 0,
      response_format: { type: 'text' },
      presence_penalty: 0,
      frequency_penalty: 0,
      logit_bias: {},
      seed: null,
      stream_options: { include_usage: true },
      store: false,
      metadata: { tag: 'x' },
      service_tier: 'auto',
      reasoning_effort: 'none',
      modalities: ['text'],
      mock: { chunks: 3 },
    });
    expect(out).toEqual({ model: 'claude-haiku-4-5', max_tokens: 4096, messages: [{ role: 'user', content: 'Hi' }] });
  });

  describe('reasoning_effort as extended thinking', () => {
    const call = { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };
    const block = { type: 'thinking', thinking: 'The user wants the weather.', signature: 'sig-1' };
    const loop = (assistant: Record<string, unknown>) => [user, { role: 'assistant', content: null, tool_calls: [call], ...assistant }, { role: 'tool', tool_call_id: 'toolu_1', content: 'sunny' }];

    it('asks for thinking with the budget of the effort, on top of the default room when the client set no limit', () => {
      expect(translate({ reasoning_effort: 'low' })).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 2048 }, max_tokens: 4096 + 2048 });
      expect(translate({ reasoning_effort: 'medium' }).thinking).toEqual({ type: 'enabled', budget_tokens: 8192 });
      expect(translate({ reasoning_effort: 'high' }).thinking).toEqual({ type: 'enabled', budget_tokens: 16384 });
      expect(translate({ reasoning_effort: 'minimal' }).thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
      expect(translate({ reasoning_effort: 'none' })).not.toHaveProperty('thinking');
    });

    it("keeps the client's limit as the limit, the budget under it, and asks for no thinking when the smallest budget does not fit", () => {
      expect(translate({ reasoning_effort: 'high', max_completion_tokens: 5000 })).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 4999 }, max_tokens: 5000 });
      expect(translate({ reasoning_effort: 'low', max_tokens: 20_000 })).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 2048 }, max_tokens: 20_000 });
      const small = translate({ reasoning_effort: 'high', max_tokens: 1024 });
      expect(small).not.toHaveProperty('thinking');
      expect(small.max_tokens).toBe(1024);
    });

    it('leaves temperature and a low top_p out once thinking is on', () => {
      const out = translate({ reasoning_effort: 'low', temperature: 0.3, top_p: 0.5 });
      expect(out).not.toHaveProperty('temperature');
      expect(out).not.toHaveProperty('top_p');
      expect(translate({ reasoning_effort: 'low', temperature: 1, top_p: 0.97 })).toMatchObject({ temperature: 1, top_p: 0.97 });
    });

    it('asks for no thinking when the tool choice forces a tool', () => {
      const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }];
      expect(translate({ reasoning_effort: 'low', tools, tool_choice: 'required' })).not.toHaveProperty('thinking');
      expect(translate({ reasoning_effort: 'low', tools, tool_choice: { type: 'function', function: { name: 'get_weather' } } })).not.toHaveProperty('thinking');
      expect(translate({ reasoning_effort: 'low', tools, tool_choice: 'auto' }).thinking).toBeDefined();
    });

    it('sends a tool loop back with the thinking its last assistant turn came with, first in that turn', () => {
      const out = translate({ reasoning_effort: 'low', messages: loop({ thinking_blocks: [block, { type: 'redacted_thinking', data: 'opaque' }] }) });
      expect(out.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
      expect(out.messages[1]).toEqual({
        role: 'assistant',
        content: [block, { type: 'redacted_thinking', data: 'opaque' }, { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }],
      });
    });

    it('asks for no thinking in a tool loop whose last assistant turn has none to go back with, and sends no blocks without thinking', () => {
      const bare = translate({ reasoning_effort: 'low', messages: loop({}) });
      expect(bare).not.toHaveProperty('thinking');
      const off = translate({ messages: loop({ thinking_blocks: [block] }) });
      expect(off).not.toHaveProperty('thinking');
      expect(off.messages[1]).toEqual({ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }] });
    });

    it('refuses an effort Anthropic has no budget for', () => {
      expect(refusal({ reasoning_effort: 'extreme' }).param).toBe('reasoning_effort');
    });
  });
});
