import { describe, expect, it } from 'vitest';
import { mapStopReason } from '../anthropic-openai.js';
import { toChatCompletion } from './anthropic-response.js';

const base = { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-haiku-4-5-20251001', stop_sequence: null };

describe('Anthropic message → OpenAI chat.completion', () => {
  it('gives its thinking as reasoning_content, and the blocks with their signatures as thinking_blocks', () => {
    const { body } = toChatCompletion(
      {
        ...base,
        content: [
          { type: 'thinking', thinking: 'Paris, then.', signature: 'sig-1' },
          { type: 'redacted_thinking', data: 'opaque' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
        ],
        stop_reason: 'tool_use',
        usage: { input_tokens: 5, output_tokens: 9 },
      },
      'fallback',
    );
    expect((body.choices as { message: unknown }[])[0]?.message).toEqual({
      role: 'assistant',
      content: null,
      refusal: null,
      tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      reasoning_content: 'Paris, then.',
      thinking_blocks: [
        { type: 'thinking', thinking: 'Paris, then.', signature: 'sig-1' },
        { type: 'redacted_thinking', data: 'opaque' },
      ],
    });
  });

  it('joins text blocks, skips a malformed thinking block, and counts the whole prompt', () => {
    const { body, usage, finish } = toChatCompletion(
      {
        ...base,
        content: [
          { type: 'thinking', text: undefined },
          { type: 'text', text: 'Hello' },
          { type: 'text', text: ' there' },
        ],
        stop_reason: 'end_turn',
        usage: { input_tokens: 5, cache_creation_input_tokens: 4, cache_read_input_tokens: 2, output_tokens: 9 },
      },
      'fallback',
      1_700_000_000_000,
    );
    expect(body).toEqual({
      id: 'chatcmpl-msg_1',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'claude-haiku-4-5-20251001',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 11, completion_tokens: 9, total_tokens: 20, prompt_tokens_details: { cached_tokens: 2 } },
    });
    expect(usage).toEqual({ input: 11, output: 9, cached: 2, cacheWrite: 4 });
    expect(finish).toEqual({ openai: 'stop', gateway: 'stop', raw: null });
  });

  it('turns tool_use blocks into tool calls with JSON arguments, content null without text', () => {
    const { body } = toChatCompletion(
      {
        ...base,
        content: [
          { type: 'tool_use', id: 'toolu_A', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'toolu_B', name: 'get_time', input: {} },
        ],
        stop_reason: 'tool_use',
        usage: { input_tokens: 3, output_tokens: 4 },
      },
      'fallback',
    );
    const choice = (body.choices as { message: Record<string, unknown>; finish_reason: string }[])[0];
    expect(choice?.message).toEqual({
      role: 'assistant',
      content: null,
      refusal: null,
      tool_calls: [
        { id: 'toolu_A', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'toolu_B', type: 'function', function: { name: 'get_time', arguments: '{}' } },
      ],
    });
    expect(choice?.finish_reason).toBe('tool_calls');
  });

  it('answers empty content as an empty string, and falls back to the upstream model name', () => {
    const { body } = toChatCompletion({ id: 'msg_2', content: [], stop_reason: 'max_tokens' }, 'claude-upstream');
    expect(body.model).toBe('claude-upstream');
    expect(body.choices).toEqual([{ index: 0, message: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: 'length' }]);
  });
});

describe('stop_reason mapping', () => {
  it('maps every documented stop reason', () => {
    expect(mapStopReason('end_turn')).toEqual({ openai: 'stop', gateway: 'stop', raw: null });
    expect(mapStopReason('stop_sequence')).toEqual({ openai: 'stop', gateway: 'stop', raw: null });
    expect(mapStopReason('max_tokens')).toEqual({ openai: 'length', gateway: 'max_tokens', raw: null });
    expect(mapStopReason('model_context_window_exceeded')).toEqual({ openai: 'length', gateway: 'max_tokens', raw: null });
    expect(mapStopReason('tool_use')).toEqual({ openai: 'tool_calls', gateway: 'tool_calls', raw: null });
    expect(mapStopReason('refusal')).toEqual({ openai: 'content_filter', gateway: 'content_filter', raw: null });
    expect(mapStopReason('pause_turn')).toEqual({ openai: 'stop', gateway: 'stop', raw: 'pause_turn' });
    expect(mapStopReason('constructor')).toEqual({ openai: 'stop', gateway: 'stop', raw: 'constructor' });
    expect(mapStopReason(null)).toEqual({ openai: 'stop', gateway: 'stop', raw: null });
  });
});
