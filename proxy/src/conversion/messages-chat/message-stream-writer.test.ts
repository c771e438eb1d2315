import { describe, expect, it } from 'vitest';
import type { StreamMeta } from '../../providers/adapter.js';
import { MessageStreamWriter } from './message-stream-writer.js';

const base = { id: 'chatcmpl-s1', object: 'chat.completion.chunk', created: 1, model: 'm' };
const chunk = (delta: Record<string, unknown>, finish: string | null = null) => JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
const usageChunk = JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 } });

function meta(partial: Partial<StreamMeta>): StreamMeta {
  return { usage: null, estimatedOutput: 0, finishReason: null, failed: false, ...partial };
}

/** The SSE text as [event name, parsed data] pairs, checking each event has both lines. */
function events(text: string): [string, Record<string, unknown>][] {
  const frames = text.split('\n\n').filter((f) => f !== '');
  return frames.map((frame) => {
    const [eventLine, dataLine, ...rest] = frame.split('\n');
    expect(rest).toEqual([]);
    expect(eventLine).toMatch(/^event: /);
    expect(dataLine).toMatch(/^data: /);
    const data = JSON.parse(dataLine!.slice(6)) as Record<string, unknown>;
    expect(data.type).toBe(eventLine!.slice(7));
    return [eventLine!.slice(7), data];
  });
}

function run(chunks: string[], end: StreamMeta): [string, Record<string, unknown>][] {
  const writer = new MessageStreamWriter('claude-client-id', 40);
  let text = writer.start();
  for (const c of chunks) text += writer.chunk(c);
  return events(text + writer.end(end));
}

describe('internal chunks → Anthropic stream events', () => {
  it("streams the provider's thinking as a thinking block, its signature last, before the text", () => {
    const block = { type: 'thinking', thinking: 'Say hello.', signature: 'sig-1' };
    const out = run(
      [chunk({ role: 'assistant', content: '' }), chunk({ reasoning_content: 'Say ' }), chunk({ reasoning_content: 'hello.' }), chunk({ thinking_blocks: [block] }), chunk({ thinking_blocks: [{ type: 'redacted_thinking', data: 'opaque' }] }), chunk({ content: 'Hello' }), chunk({}, 'stop')],
      meta({ finishReason: 'stop' }),
    );
    const blocks = out.filter(([name]) => name.startsWith('content_block'));
    expect(blocks.map(([, data]) => [data.type, data.index, (data.content_block as { type?: string } | undefined)?.type ?? (data.delta as { type?: string } | undefined)?.type ?? null])).toEqual([
      ['content_block_start', 0, 'thinking'],
      ['content_block_delta', 0, 'thinking_delta'],
      ['content_block_delta', 0, 'thinking_delta'],
      ['content_block_delta', 0, 'signature_delta'],
      ['content_block_stop', 0, null],
      ['content_block_start', 1, 'redacted_thinking'],
      ['content_block_stop', 1, null],
      ['content_block_start', 2, 'text'],
      ['content_block_delta', 2, 'text_delta'],
      ['content_block_stop', 2, null],
    ]);
    expect(blocks[3]![1].delta).toEqual({ type: 'signature_delta', signature: 'sig-1' });
    expect(blocks[5]![1].content_block).toEqual({ type: 'redacted_thinking', data: 'opaque' });
  });

  it('streams text as one block between message_start and message_stop', () => {
    const out = run(
      [chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hel' }), chunk({ content: 'lo' }), chunk({}, 'stop'), usageChunk],
      meta({ usage: { input: 12, output: 5, cached: 2 }, finishReason: 'stop' }),
    );
    expect(out.map(([name]) => name)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(out[0]![1].message).toMatchObject({
      id: 'msg_s1',
      type: 'message',
      role: 'assistant',
      model: 'claude-client-id',
      content: [],
      stop_reason: null,
      usage: { input_tokens: 40, output_tokens: 0 },
    });
    expect(out[1]![1]).toEqual({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    expect(out[2]![1]).toEqual({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hel' } });
    expect(out[4]![1]).toEqual({ type: 'content_block_stop', index: 0 });
    expect(out[5]![1]).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 2, cache_creation_input_tokens: 0 },
    });
  });

  it('streams text, then each tool call as its own tool_use block with input_json_delta pieces', () => {
    const out = run(
      [
        chunk({ role: 'assistant', content: 'Checking.' }),
        chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
        chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{}' } }] }),
        chunk({}, 'tool_calls'),
      ],
      meta({ usage: { input: 12, output: 9 }, finishReason: 'tool_calls' }),
    );
    const shapes = out.slice(1, -2).map(([name, data]) => [name, data.index, (data.content_block as { type?: string } | undefined)?.type ?? (data.delta as { type?: string } | undefined)?.type ?? null]);
    expect(shapes).toEqual([
      ['content_block_start', 0, 'text'],
      ['content_block_delta', 0, 'text_delta'],
      ['content_block_stop', 0, null],
      ['content_block_start', 1, 'tool_use'],
      ['content_block_delta', 1, 'input_json_delta'],
      ['content_block_delta', 1, 'input_json_delta'],
      ['content_block_stop', 1, null],
      ['content_block_start', 2, 'tool_use'],
      ['content_block_delta', 2, 'input_json_delta'],
      ['content_block_stop', 2, null],
    ]);
    expect(out[4]![1].content_block).toEqual({ type: 'tool_use', id: 'call_a', name: 'get_weather', input: {} });
    expect(out[5]![1].delta).toEqual({ type: 'input_json_delta', partial_json: '{"city":' });
    expect(out.at(-2)![1].delta).toEqual({ stop_reason: 'tool_use', stop_sequence: null });
  });

  it('maps length to max_tokens and falls back to estimates when the provider sent no usage', () => {
    const out = run([chunk({ content: 'cut' }), chunk({}, 'length')], meta({ estimatedOutput: 3, finishReason: 'max_tokens' }));
    expect(out.at(-2)![1]).toMatchObject({ delta: { stop_reason: 'max_tokens' }, usage: { input_tokens: 40, output_tokens: 3 } });
  });

  it('still frames a stream that brought no chunk at all', () => {
    const out = run([], meta({ finishReason: 'stop' }));
    expect(out.map(([name]) => name)).toEqual(['message_start', 'message_delta', 'message_stop']);
  });

  it('ignores a chunk that is not JSON', () => {
    const writer = new MessageStreamWriter('m', 1);
    expect(writer.chunk('not json')).toBe('');
  });
});
