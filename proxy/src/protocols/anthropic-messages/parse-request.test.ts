import { GatewayError } from '@gateway/shared';
import { describe, expect, it } from 'vitest';
import { parseMessagesRequest, type MessagesPurpose } from './parse-request.js';
import { thinkingOf } from '../../request/thinking-blocks.js';

const base = { model: 'claude-x', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] };

function parse(body: unknown, purpose?: MessagesPurpose) {
  return parseMessagesRequest(body, Buffer.from(JSON.stringify(body) ?? ''), purpose);
}

function refusal(body: unknown): GatewayError {
  try {
    parse(body);
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    return err as GatewayError;
  }
  throw new Error('the body was accepted');
}

describe('Messages request → internal request', () => {
  it('translates the minimal request and keeps the client body for a native provider', () => {
    const parsed = parse(base);
    expect(parsed.chat).toEqual({ model: 'claude-x', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] });
    expect(parsed).toMatchObject({ raw: null, model: 'claude-x', stream: false, wantsUsage: true, maxTokens: 100 });
    expect(parsed.anthropic).toMatchObject(base);
    expect(parsed.anthropicRaw.toString()).toBe(JSON.stringify(base));
  });

  it('asks a streamed answer for its usage chunk', () => {
    expect(parse({ ...base, stream: true }).chat).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(parse({ ...base, stream: false }).chat).not.toHaveProperty('stream');
  });

  it('turns system (a string or text blocks) into a system message, first', () => {
    expect(parse({ ...base, system: 'Be brief.' }).chat.messages).toEqual([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }]);
    const blocks = parse({ ...base, system: [{ type: 'text', text: 'A', cache_control: { type: 'ephemeral' } }, { type: 'text', text: 'B' }] });
    expect((blocks.chat.messages as unknown[])[0]).toEqual({ role: 'system', content: [{ type: 'text', text: 'A' }, { type: 'text', text: 'B' }] });
    expect((parse({ ...base, system: [{ type: 'text', text: 'Only' }] }).chat.messages as unknown[])[0]).toEqual({ role: 'system', content: 'Only' });
  });

  it('translates text and image blocks into content parts', () => {
    const parsed = parse({
      ...base,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
          ],
        },
      ],
    });
    expect(parsed.chat.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
        ],
      },
    ]);
  });

  it('turns tool_use into tool_calls and tool_result into tool messages, in order, then the turn\'s text', () => {
    const parsed = parse({
      ...base,
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'two calls', signature: 'sig' },
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: { city: 'Rome' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' },
            { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: 'station' }, { type: 'text', text: 'offline' }], is_error: true },
            { type: 'text', text: 'Summarise.' },
          ],
        },
      ],
    });
    expect(parsed.chat.messages).toEqual([
      { role: 'user', content: 'Weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'toolu_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'sunny' },
      { role: 'tool', tool_call_id: 'toolu_2', content: 'Error: station\noffline' },
      { role: 'user', content: 'Summarise.' },
    ]);    // The signed thought goes with the turn, out of sight of JSON: a Claude target reached by translation gets it back.
    expect(thinkingOf(parsed.chat.messages[1]!)).toEqual([{ type: 'thinking', thinking: 'two calls', signature: 'sig' }]);
    expect(JSON.stringify(parsed.chat)).not.toContain('two calls');
  });

  it('gives an assistant turn of tool calls only null content', () => {
    const parsed = parse({
      ...base,
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't' }] },
      ],
    });
    expect((parsed.chat.messages as unknown[]).slice(1)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 't', content: '' },
    ]);
  });

  it('translates tools and every tool_choice', () => {
    const tools = [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } }, cache_control: { type: 'ephemeral' } }];
    const fn = { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: tools[0]!.input_schema } };
    expect(parse({ ...base, tools }).chat).toMatchObject({ tools: [fn] });
    expect(parse({ ...base, tools }).chat).not.toHaveProperty('tool_choice');
    expect(parse({ ...base, tools, tool_choice: { type: 'auto' } }).chat.tool_choice).toBe('auto');
    expect(parse({ ...base, tools, tool_choice: { type: 'any' } }).chat.tool_choice).toBe('required');
    expect(parse({ ...base, tools, tool_choice: { type: 'none' } }).chat.tool_choice).toBe('none');
    expect(parse({ ...base, tools, tool_choice: { type: 'tool', name: 'get_weather' } }).chat.tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
    const single = parse({ ...base, tools, tool_choice: { type: 'auto', disable_parallel_tool_use: true } }).chat;
    expect(single.parallel_tool_calls).toBe(false);
    expect(parse({ ...base, tool_choice: { type: 'auto' } }).chat).not.toHaveProperty('tool_choice');
  });

  it('maps stop_sequences, temperature, top_p, metadata.user_id and output_config.format', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false };
    const chat = parse({
      ...base,
      stop_sequences: ['END', '###'],
      temperature: 1,
      top_p: 0.9,
      metadata: { user_id: 'user-7' },
      output_config: { format: { type: 'json_schema', schema } },
      thinking: { type: 'disabled' },
      service_tier: 'auto',
      cache_control: { type: 'ephemeral' },
    }).chat;
    expect(chat).toEqual({
      model: 'claude-x',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Hi' }],
      stop: ['END', '###'],
      temperature: 1,
      top_p: 0.9,
      user: 'user-7',
      response_format: { type: 'json_schema', json_schema: { name: 'output', schema, strict: true } },
    });
  });

  it('accepts free-form JSON nested as deep as real schemas go', () => {
    expect(() => parse({ ...base, tools: [{ name: 'f', input_schema: nested(40) }] })).not.toThrow();
  });

  it('does not ask count_tokens for max_tokens', () => {
    const { max_tokens: _, ...noMax } = base;
    expect(parse(noMax, 'count').maxTokens).toBeNull();
    expect(parse(noMax, 'count').chat).not.toHaveProperty('max_tokens');
  });
});

function nested(depth: number): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  let at = root;
  for (let i = 0; i < depth; i++) at = (at.a = {}) as Record<string, unknown>;
  return root;
}

describe('Messages request refusals name the field', () => {
  const { max_tokens: _, ...noMax } = base;
  const cases: [string, unknown, string, RegExp?][] = [
    ['a body that is no object', [base], 'body'],
    ['no model', { ...base, model: undefined }, 'model', /Field required/],
    ['no max_tokens', noMax, 'max_tokens', /Field required/],
    ['max_tokens zero', { ...base, max_tokens: 0 }, 'max_tokens'],
    ['max_tokens fractional', { ...base, max_tokens: 2.5 }, 'max_tokens'],
    ['no messages', { ...base, messages: undefined }, 'messages'],
    ['empty messages', { ...base, messages: [] }, 'messages'],
    ['content a number', { ...base, messages: [{ role: 'user', content: 5 }] }, 'messages.0.content'],
    ['an empty user turn', { ...base, messages: [{ role: 'user', content: [] }] }, 'messages.0.content'],
    ['a block without type', { ...base, messages: [{ role: 'user', content: [{ text: 'x' }] }] }, 'messages.0.content.0.type'],
    ['a text block without text', { ...base, messages: [{ role: 'user', content: [{ type: 'text' }] }] }, 'messages.0.content.0.text'],
    ['a document block', { ...base, messages: [{ role: 'user', content: [{ type: 'document', source: {} }] }] }, 'messages.0.content.0.type', /not supported/],
    ['an image of a file id', { ...base, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'f' } }] }] }, 'messages.0.content.0.source.type', /not supported/],
    ['an image of another type', { ...base, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/bmp', data: 'x' } }] }] }, 'messages.0.content.0.source.media_type'],
    ['an image URL that is not http', { ...base, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'file:///etc/passwd' } }] }] }, 'messages.0.content.0.source.url'],
    ['a tool_result after text', { ...base, messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }, { type: 'tool_result', tool_use_id: 't' }] }] }, 'messages.0.content.1'],
    ['a tool_result without tool_use_id', { ...base, messages: [{ role: 'user', content: [{ type: 'tool_result', content: 'x' }] }] }, 'messages.0.content.0.tool_use_id'],
    ['an image inside a tool_result', { ...base, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'image', source: {} }] }] }] }, 'messages.0.content.0.content.0.type'],
    ['is_error not boolean', { ...base, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', is_error: 'yes' }] }] }, 'messages.0.content.0.is_error'],
    ['tool_use in a user turn', { ...base, messages: [{ role: 'user', content: [{ type: 'tool_use', id: 't', name: 'f', input: {} }] }] }, 'messages.0.content.0.type'],
    ['tool_use input not an object', { ...base, messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: '{}' }] }] }, 'messages.0.content.0.input'],
    ['temperature above 1', { ...base, temperature: 1.5 }, 'temperature'],
    ['top_p above 1', { ...base, top_p: 2 }, 'top_p'],
    ['stop_sequences a string', { ...base, stop_sequences: 'END' }, 'stop_sequences'],
    ['an empty stop sequence', { ...base, stop_sequences: ['a', ''] }, 'stop_sequences.1'],
    ['stream not boolean', { ...base, stream: 'yes' }, 'stream'],
    ['metadata.user_id a number', { ...base, metadata: { user_id: 5 } }, 'metadata.user_id'],
    ['tools not an array', { ...base, tools: {} }, 'tools'],
    ['a tool without input_schema', { ...base, tools: [{ name: 'f' }] }, 'tools.0.input_schema'],
    ['a tool name with spaces', { ...base, tools: [{ name: 'get weather', input_schema: {} }] }, 'tools.0.name'],
    ['a server tool', { ...base, tools: [{ type: 'web_search_20250305', name: 'web_search' }] }, 'tools.0.type', /not supported/],
    ['tool_choice any without tools', { ...base, tool_choice: { type: 'any' } }, 'tool_choice'],
    ['tool_choice naming no tool', { ...base, tools: [{ name: 'f', input_schema: {} }], tool_choice: { type: 'tool', name: 'g' } }, 'tool_choice.name'],
    ['tool_choice of an unknown type', { ...base, tool_choice: { type: 'sometimes' } }, 'tool_choice.type'],
    ['a tool input nested past the limit', { ...base, messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: nested(100) }] }] }, 'messages.0.content.0.input', /nested/],
    ['an input_schema nested past the limit', { ...base, tools: [{ name: 'f', input_schema: nested(70) }] }, 'tools.0.input_schema', /nested/],
    ['an Anthropic-only field', { ...base, mcp_servers: [] }, 'mcp_servers', /MCP/],
    ['a container', { ...base, container: 'c_1' }, 'container', /containers/],
    ['a role the API has not', { ...base, messages: [{ role: 'tool', content: 'x' }] }, 'messages.0.role'],
    ['a system message holding an image', { ...base, messages: [{ role: 'system', content: [{ type: 'image', source: {} }] }] }, 'messages.0.content.0.type'],
    ['thinking of an unknown type', { ...base, thinking: { type: 'sometimes' } }, 'thinking.type'],
    ['a thinking budget under 1024', { ...base, thinking: { type: 'enabled', budget_tokens: 100 } }, 'thinking.budget_tokens'],
    ['a thinking budget over max_tokens', { ...base, max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 4000 } }, 'thinking.budget_tokens'],
    ['an effort of another level', { ...base, output_config: { effort: 'extreme' } }, 'output_config.effort'],
  ];
  for (const [what, body, param, message] of cases) {
    it(`refuses ${what} (${param})`, () => {
      const err = refusal(body);
      expect(err.code).toBe('INVALID_REQUEST');
      expect(err.param).toBe(param);
      if (message) expect(err.message).toMatch(message);
    });
  }
});

describe('Messages request: what maps and what is dropped', () => {
  it('keeps a system message where it stands in the conversation', () => {
    const parsed = parse({ ...base, messages: [{ role: 'user', content: 'Hi' }, { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] }, { role: 'user', content: 'Go' }] });
    expect(parsed.chat.messages.map((m) => m.role)).toEqual(['user', 'system', 'user']);
    expect(parsed.chat.messages[1]?.content).toBe('Be brief.');
    expect(parsed.dropped).toBeUndefined();
  });

  it('maps thinking and effort to the reasoning effort', () => {
    const effort = (body: Record<string, unknown>) => parse({ ...base, max_tokens: 32000, ...body }).chat.reasoning_effort;
    expect(effort({ thinking: { type: 'enabled', budget_tokens: 2000 } })).toBe('low');
    expect(effort({ thinking: { type: 'enabled', budget_tokens: 8000 } })).toBe('medium');
    expect(effort({ thinking: { type: 'enabled', budget_tokens: 20000 } })).toBe('high');
    expect(effort({ thinking: { type: 'adaptive' } })).toBe('medium');
    expect(effort({ thinking: { type: 'adaptive', display: 'omitted' }, output_config: { effort: 'low' } })).toBe('low');
    expect(effort({ output_config: { effort: 'max' } })).toBe('high');
    expect(effort({ thinking: { type: 'disabled' }, output_config: { effort: 'high' } })).toBeUndefined();
    expect(effort({})).toBeUndefined();
  });

  it('drops what only tunes the answer and names it, in the body order', () => {
    const parsed = parse({ ...base, context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] }, top_k: 40, service_tier: 'auto', speed: 'fast', output_config: { effort: 'medium', task_budget: 5 }, future_field: {} });
    expect(parsed.dropped).toEqual(['context_management', 'top_k', 'service_tier', 'speed', 'future_field', 'output_config.task_budget']);
    for (const field of ['context_management', 'top_k', 'service_tier', 'speed', 'future_field']) expect(parsed.chat).not.toHaveProperty(field);
    expect(parsed.chat.reasoning_effort).toBe('medium');
  });

  it('reads a Claude Code turn whole: adaptive thinking, effort, context management, a mid-conversation system message', () => {
    const parsed = parse({
      model: 'claude-opus-5-5',
      max_tokens: 128000,
      stream: true,
      metadata: { user_id: JSON.stringify({ device_id: 'd', account_uuid: '', session_id: 's-1' }) },
      thinking: { type: 'adaptive', display: 'omitted' },
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
      output_config: { effort: 'medium' },
      system: [{ type: 'text', text: 'You are an agent.', cache_control: { type: 'ephemeral' } }],
      tools: [{ name: 'Read', description: 'Reads a file', input_schema: { type: 'object', properties: {} } }, { name: 'Later', description: 'x', input_schema: { type: 'object' }, defer_loading: true }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Read note.txt' }] },
        { role: 'system', content: [{ type: 'text', text: 'Reminder.', cache_control: { type: 'ephemeral' } }] },
        { role: 'assistant', content: [{ type: 'thinking', thinking: '', signature: 'sig' }, { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { path: 'note.txt' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'the note' }] },
      ],
    });
    expect(parsed.chat).toMatchObject({ model: 'claude-opus-5-5', max_tokens: 128000, stream: true, user: 's-1', reasoning_effort: 'medium' });
    expect(parsed.chat.messages.map((m) => m.role)).toEqual(['system', 'user', 'system', 'assistant', 'tool']);
    expect(parsed.chat.tools).toHaveLength(2);
    expect(parsed.dropped).toEqual(['context_management']);
  });
});
