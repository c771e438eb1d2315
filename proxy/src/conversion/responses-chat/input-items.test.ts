import { describe, expect, it } from 'vitest';
import { encodeThinking, thinkingOf } from '../../request/thinking-blocks.js';
import { inputMessages } from './input-items.js';
import { ToolSet } from './tools.js';

const block = { type: 'thinking' as const, thinking: 'Run it.', signature: 'sig-1' };

describe('Responses input items → chat messages: reasoning', () => {
  it('carries the thinking blocks of a reasoning item the gateway wrote on the assistant turn that follows, out of sight of JSON', () => {
    const messages = inputMessages(
      [
        { type: 'message', role: 'user', content: 'Run the tool.' },
        { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: encodeThinking([block]) },
        { type: 'function_call', call_id: 'call_1', name: 'exec', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_1', output: '42' },
      ],
      new ToolSet(),
    );
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(thinkingOf(messages[1]!)).toEqual([block]);
    expect(JSON.stringify(messages)).not.toContain('sig-1');
  });

  it('joins reasoning to the assistant message it precedes, and leaves out reasoning it cannot send back', () => {
    const messages = inputMessages(
      [
        { type: 'message', role: 'user', content: 'Hi' },
        { type: 'reasoning', id: 'rs_0', summary: [], encrypted_content: 'gAAAAABopenaiOwn' },
        { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: encodeThinking([block]) },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Running it.' }] },
        { type: 'function_call', call_id: 'call_1', name: 'exec', arguments: '{}' },
        { type: 'reasoning', id: 'rs_2', summary: [], encrypted_content: encodeThinking([block]) },
        { type: 'message', role: 'user', content: 'Thanks' },
      ],
      new ToolSet(),
    );
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(thinkingOf(messages[1]!)).toEqual([block]);
    expect(messages[1]?.tool_calls).toHaveLength(1);
    expect(thinkingOf(messages[2]!)).toBeNull();
  });
});
