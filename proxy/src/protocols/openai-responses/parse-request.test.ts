import { GatewayError } from '@gateway/shared';
import { describe, expect, it } from 'vitest';
import { parseResponsesRequest } from './parse-request.js';

function refusal(body: unknown): GatewayError {
  try {
    parseResponsesRequest(body);
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    return err as GatewayError;
  }
  throw new Error('the request was accepted');
}

const base = { model: 'mock-1', input: 'Hi' };

describe('Responses request → chat request', () => {
  it('makes a string input one user message, after the instructions as a system message', () => {
    const parsed = parseResponsesRequest({ ...base, instructions: 'Be brief.' });
    expect(parsed.chat).toEqual({ model: 'mock-1', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }] });
    expect(parsed).toMatchObject({ raw: null, model: 'mock-1', stream: false, wantsUsage: true, maxTokens: null });
    expect(parsed.echo).toMatchObject({ instructions: 'Be brief.', store: false, tools: [], tool_choice: 'auto', parallel_tool_calls: true, text: { format: { type: 'text' } }, metadata: {} });
  });

  it('translates message items and their content parts', () => {
    const parsed = parseResponsesRequest({
      model: 'mock-1',
      input: [
        { role: 'developer', content: 'Rules.' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'What is this?' }, { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'low' }, { type: 'input_image', image_url: 'https://example.com/a.png' }] },
        { type: 'message', role: 'assistant', id: 'msg_1', status: 'completed', content: [{ type: 'output_text', text: 'A cat.', annotations: [] }] },
        { role: 'user', content: [{ type: 'input_file', filename: 'a.pdf', file_data: 'data:application/pdf;base64,AAAA' }] },
      ],
    });
    expect(parsed.chat.messages).toEqual([
      { role: 'developer', content: 'Rules.' },
      { role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } }, { type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] },
      { role: 'assistant', content: [{ type: 'text', text: 'A cat.' }] },
      { role: 'user', content: [{ type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,AAAA' } }] },
    ]);
  });

  it('merges consecutive function calls into one assistant message, joined to its text, and makes outputs tool messages', () => {
    const parsed = parseResponsesRequest({
      model: 'mock-1',
      input: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        { type: 'reasoning', id: 'rs_1', summary: [] },
        { role: 'assistant', content: 'Checking.' },
        { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call', call_id: 'c2', name: 'get_weather', arguments: '{"city":"Rome"}' },
        { type: 'function_call_output', call_id: 'c1', output: 'sunny' },
        { type: 'function_call_output', call_id: 'c2', output: [{ type: 'input_text', text: 'rain' }, { type: 'input_text', text: 'y' }] },
        { type: 'function_call', call_id: 'c3', name: 'get_time', arguments: '{}' },
      ],
    });
    expect(parsed.chat.messages).toEqual([
      { role: 'user', content: 'Weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'c2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
      { role: 'tool', tool_call_id: 'c2', content: 'rainy' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c3', type: 'function', function: { name: 'get_time', arguments: '{}' } }] },
    ]);
  });

  it('maps function tools to the nested chat shape, with tool_choice and parallel_tool_calls', () => {
    const parsed = parseResponsesRequest({
      ...base,
      tools: [{ type: 'function', name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: true }],
      tool_choice: { type: 'function', name: 'get_weather' },
      parallel_tool_calls: false,
    });
    expect(parsed.chat).toMatchObject({
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: true } }],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
    });
    expect(parsed.echo).toMatchObject({ tool_choice: { type: 'function', name: 'get_weather' }, parallel_tool_calls: false, tools: [{ type: 'function', name: 'get_weather', strict: true }] });
    for (const choice of ['auto', 'none', 'required']) expect(parseResponsesRequest({ ...base, tools: [{ type: 'function', name: 'f' }], tool_choice: choice }).chat.tool_choice).toBe(choice);
  });

  it('leaves tool_choice and parallel_tool_calls out without tools (Chat Completions refuses them alone)', () => {
    const parsed = parseResponsesRequest({ ...base, tools: [], tool_choice: 'auto', parallel_tool_calls: true });
    expect(parsed.chat).not.toHaveProperty('tools');
    expect(parsed.chat).not.toHaveProperty('tool_choice');
    expect(parsed.chat).not.toHaveProperty('parallel_tool_calls');
  });

  it('maps max_output_tokens, sampling, text.format, verbosity, reasoning effort, user and cache keys', () => {
    const parsed = parseResponsesRequest({
      ...base,
      max_output_tokens: 50,
      temperature: 0.5,
      top_p: 0.9,
      text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true }, verbosity: 'low' },
      reasoning: { effort: 'low', summary: 'auto' },
      user: 'u-1',
      prompt_cache_key: 'k',
      safety_identifier: 's',
      service_tier: 'auto',
      metadata: { run: '7' },
      store: false,
      include: ['reasoning.encrypted_content'],
      background: false,
      truncation: 'disabled',
    });
    expect(parsed.maxTokens).toBe(50);
    expect(parsed.chat).toEqual({
      model: 'mock-1',
      messages: [{ role: 'user', content: 'Hi' }],
      max_tokens: 50,
      temperature: 0.5,
      top_p: 0.9,
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' }, strict: true } },
      verbosity: 'low',
      reasoning_effort: 'low',
      user: 'u-1',
      prompt_cache_key: 'k',
      safety_identifier: 's',
      service_tier: 'auto',
    });
    expect(parsed.echo).toMatchObject({ max_output_tokens: 50, metadata: { run: '7' }, reasoning: { effort: 'low', summary: 'auto' }, user: 'u-1' });
    expect(parseResponsesRequest({ ...base, text: { format: { type: 'json_object' } } }).chat.response_format).toEqual({ type: 'json_object' });
    expect(parseResponsesRequest({ ...base, text: { format: { type: 'text' } } }).chat).not.toHaveProperty('response_format');
  });

  it('asks the provider for the usage chunk on a stream', () => {
    const parsed = parseResponsesRequest({ ...base, stream: true });
    expect(parsed.stream).toBe(true);
    expect(parsed.chat).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('keeps a "__proto__" metadata key as a key', () => {
    const parsed = parseResponsesRequest(JSON.parse('{"model":"m","input":"x","metadata":{"__proto__":"v"}}'));
    expect(Object.keys(parsed.echo.metadata as object)).toEqual(['__proto__']);
  });
});

describe('Responses request refusals', () => {
  const cases: [string, unknown, string, RegExp?][] = [
    ['a previous_response_id that is no response id', { ...base, previous_response_id: 'conv_1' }, 'previous_response_id', /resp_/],
    ['conversation', { ...base, conversation: 'conv_1' }, 'conversation', /not conversations/],
    ['background', { ...base, background: true }, 'background'],
    ['prompt templates', { ...base, prompt: { id: 'pmpt_1' } }, 'prompt'],
    ['an include value', { ...base, include: ['file_search_call.results'] }, 'include', /file_search_call\.results/],
    ['web_search', { ...base, tools: [{ type: 'web_search' }] }, 'tools[0].type', /web_search/],
    ['file_search', { ...base, tools: [{ type: 'file_search', vector_store_ids: ['v'] }] }, 'tools[0].type', /file_search/],
    ['computer_use_preview', { ...base, tools: [{ type: 'function', name: 'f' }, { type: 'computer_use_preview' }] }, 'tools[1].type'],
    ['code_interpreter', { ...base, tools: [{ type: 'code_interpreter' }] }, 'tools[0].type'],
    ['image_generation', { ...base, tools: [{ type: 'image_generation' }] }, 'tools[0].type'],
    ['mcp', { ...base, tools: [{ type: 'mcp', server_label: 'x' }] }, 'tools[0].type'],
    ['a built-in tool choice', { ...base, tools: [{ type: 'function', name: 'f' }], tool_choice: { type: 'web_search_preview' } }, 'tool_choice'],
    ['an item reference', { ...base, input: [{ type: 'item_reference', id: 'msg_1' }] }, 'input[0]', /store: false/],
    ['a built-in tool item', { ...base, input: [{ type: 'web_search_call', id: 'ws_1' }] }, 'input[0].type'],
    ['truncation auto', { ...base, truncation: 'auto' }, 'truncation'],
    ['top_logprobs', { ...base, top_logprobs: 3 }, 'top_logprobs'],
    ['an image by file id', { ...base, input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file_1' }] }] }, 'input[0].content[0].file_id'],
    ['an image from the assistant', { ...base, input: [{ role: 'assistant', content: [{ type: 'input_image', image_url: 'https://x' }] }] }, 'input[0].content[0].type'],
    ['no model', { input: 'x' }, 'model'],
    ['no input', { model: 'm' }, 'input'],
    ['an empty input list', { model: 'm', input: [] }, 'input'],
    ['only reasoning items', { model: 'm', input: [{ type: 'reasoning', summary: [] }] }, 'input'],
    ['an unknown role', { model: 'm', input: [{ role: 'wizard', content: 'x' }] }, 'input[0].role'],
    ['a function call without call_id', { model: 'm', input: [{ type: 'function_call', name: 'f', arguments: '{}' }] }, 'input[0].call_id'],
    ['arguments that are not a string', { model: 'm', input: [{ type: 'function_call', call_id: 'c', name: 'f', arguments: {} }] }, 'input[0].arguments'],
    ['temperature above 2', { ...base, temperature: 3 }, 'temperature'],
    ['top_p above 1', { ...base, top_p: 2 }, 'top_p'],
    ['max_output_tokens zero', { ...base, max_output_tokens: 0 }, 'max_output_tokens'],
    ['a json_schema without a schema', { ...base, text: { format: { type: 'json_schema', name: 'x' } } }, 'text.format.schema'],
    ['an unknown reasoning effort', { ...base, reasoning: { effort: 'extreme' } }, 'reasoning.effort'],
    ['metadata that is not strings', { ...base, metadata: { a: 1 } }, 'metadata'],
    ['a JSON array body', [1], 'body'],
  ];
  for (const [what, body, param, message] of cases) {
    it(`refuses ${what}, naming ${param}`, () => {
      const err = refusal(body);
      expect(err.code).toBe('INVALID_REQUEST');
      expect(err.status).toBe(400);
      expect(err.param).toBe(param);
      if (message) expect(err.message).toMatch(message);
    });
  }
});

describe('Responses request: what is dropped, and the Codex CLI\'s tools', () => {
  it('drops what only tunes the answer and names it', () => {
    const parsed = parseResponsesRequest({ ...base, client_metadata: { a: 'b' }, context_management: [{ type: 'compaction' }], max_tool_calls: 3, frequency_penalty: 1, reasoning: { effort: 'low', context: 'all_turns' }, text: { verbosity: 'low', future: 1 } });
    expect(parsed.dropped).toEqual(['client_metadata', 'context_management', 'max_tool_calls', 'frequency_penalty', 'text.future', 'reasoning.context']);
    expect(parsed.chat).not.toHaveProperty('client_metadata');
    expect(parsed.chat).toMatchObject({ reasoning_effort: 'low', verbosity: 'low' });
  });

  it('maps namespaced, custom and additional tools, and replays their calls under the chat names', () => {
    const parsed = parseResponsesRequest({
      ...base,
      input: [
        {
          type: 'additional_tools',
          role: 'developer',
          tools: [
            { type: 'namespace', name: 'functions', tools: [{ type: 'custom', name: 'exec', description: 'Run code', format: { type: 'grammar', syntax: 'lark', definition: 'start: /.+/' } }, { type: 'function', name: 'wait', parameters: { type: 'object' } }] },
            { type: 'namespace', name: 'clock', description: '', tools: [{ type: 'function', name: 'sleep', parameters: { type: 'object' } }] },
          ],
        },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Go' }] },
        { type: 'custom_tool_call', call_id: 'c1', name: 'exec', input: 'text(1)' },
        { type: 'custom_tool_call_output', call_id: 'c1', output: '1' },
        { type: 'function_call', call_id: 'c2', name: 'sleep', namespace: 'clock', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c2', output: 'slept' },
      ],
      tool_choice: 'auto',
    });
    const names = parsed.chat.tools?.map((t) => t.function?.name);
    expect(names).toEqual(['exec', 'wait', 'clock__sleep']);
    expect(parsed.chat.tools?.[0]?.function?.parameters).toMatchObject({ properties: { input: { type: 'string' } }, required: ['input'] });
    expect(String((parsed.chat.tools?.[0]?.function?.parameters as { properties: { input: { description: string } } }).properties.input.description)).toContain('start: /.+/');
    expect(parsed.chat.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool']);
    expect(parsed.chat.messages[1]?.tool_calls?.[0]?.function).toEqual({ name: 'exec', arguments: JSON.stringify({ input: 'text(1)' }) });
    expect(parsed.chat.messages[3]?.tool_calls?.[0]?.function.name).toBe('clock__sleep');
    expect(parsed.toolOrigins?.get('exec')).toEqual({ name: 'exec', custom: true });
    expect(parsed.toolOrigins?.get('clock__sleep')).toEqual({ name: 'sleep', namespace: 'clock', custom: false });
    expect(parsed.toolOrigins?.has('wait')).toBe(false);
  });

  it('refuses a tool declared twice and a namespace inside a namespace', () => {
    expect(refusal({ ...base, tools: [{ type: 'function', name: 'f' }, { type: 'namespace', name: 'functions', tools: [{ type: 'function', name: 'f' }] }] }).param).toBe('tools[1].tools[0].name');
    expect(refusal({ ...base, tools: [{ type: 'namespace', name: 'a', tools: [{ type: 'namespace', name: 'b', tools: [] }] }] }).param).toBe('tools[0].tools[0].type');
  });
});
