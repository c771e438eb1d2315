import { describe, expect, it } from 'vitest';
import type { CompletionResult } from '../../providers/adapter.js';
import { renderMessage } from './render-message.js';

function completion(message: Record<string, unknown>, finish: string, id = 'chatcmpl-abc123'): Buffer {
  return Buffer.from(JSON.stringify({ id, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }] }));
}

function render(result: Partial<CompletionResult> & { body: Buffer }): Record<string, unknown> {
  const full: CompletionResult = { status: 200, usage: { input: 10, output: 3 }, finishReason: 'stop', ...result };
  return JSON.parse(renderMessage(full, 'claude-client-id').toString()) as Record<string, unknown>;
}

describe('internal answer → Anthropic message', () => {
  it("puts the provider's thinking blocks first, as they came; reasoning without blocks as one unsigned thinking block", () => {
    const blocks = [{ type: 'thinking', thinking: 'Greet.', signature: 'sig-1' }, { type: 'redacted_thinking', data: 'opaque' }];
    const signed = render({ body: completion({ content: 'Hi', reasoning_content: 'Greet.', thinking_blocks: blocks }, 'stop') });
    expect(signed.content).toEqual([...blocks, { type: 'text', text: 'Hi' }]);
    const unsigned = render({ body: completion({ content: 'Hi', reasoning_content: 'Greet.' }, 'stop') });
    expect(unsigned.content).toEqual([{ type: 'thinking', thinking: 'Greet.', signature: '' }, { type: 'text', text: 'Hi' }]);
  });

  it('renders text with the client\'s model id, a msg_ id and Anthropic usage', () => {
    const message = render({ body: completion({ content: 'Hello there' }, 'stop'), usage: { input: 10, output: 3, cached: 4 } });
    expect(message).toEqual({
      id: 'msg_abc123',
      type: 'message',
      role: 'assistant',
      model: 'claude-client-id',
      content: [{ type: 'text', text: 'Hello there' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 6, output_tokens: 3, cache_read_input_tokens: 4, cache_creation_input_tokens: 0 },
    });
  });

  it('renders tool calls as tool_use blocks after the text, input parsed', () => {
    const body = completion(
      {
        content: 'Let me check.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '' } },
        ],
      },
      'tool_calls',
    );
    const message = render({ body, finishReason: 'tool_calls' });
    expect(message.content).toEqual([
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'call_2', name: 'get_time', input: {} },
    ]);
    expect(message.stop_reason).toBe('tool_use');
  });

  it('gives no text block to a tool call without text, and {} to arguments cut short', () => {
    const body = completion({ content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"city":"Par' } }] }, 'length');
    const message = render({ body, finishReason: 'max_tokens' });
    expect(message.content).toEqual([{ type: 'tool_use', id: 'c', name: 'f', input: {} }]);
    expect(message.stop_reason).toBe('max_tokens');
  });

  it('maps content_filter to refusal and shows the refusal text', () => {
    const message = render({ body: completion({ content: null, refusal: 'I cannot help with that.' }, 'content_filter'), finishReason: 'content_filter' });
    expect(message.stop_reason).toBe('refusal');
    expect(message.content).toEqual([{ type: 'text', text: 'I cannot help with that.' }]);
  });

  it('makes a safe message id from any completion id', () => {
    expect(render({ body: completion({ content: 'x' }, 'stop', 'weird id/with:chars') }).id).toBe('msg_weirdidwithchars');
    expect(render({ body: completion({ content: 'x' }, 'stop', '') }).id).toMatch(/^msg_[0-9a-f]{32}$/);
  });
});
