import { createSseDecoder, GatewayError } from '@gateway/shared';
import { describe, expect, it } from 'vitest';
import type { StreamMeta } from '../../providers/adapter.js';
import { ResponseStreamWriter } from './response-stream.js';
import { decodeThinking } from '../../request/thinking-blocks.js';

interface Event {
  event: string;
  data: Record<string, any>;
}

function events(text: string): Event[] {
  const out: Event[] = [];
  const decoder = createSseDecoder((e) => out.push({ event: e.event ?? '', data: JSON.parse(e.data) as Record<string, any> }));
  decoder.feed(text);
  return out;
}

const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'up' };
const chunk = (delta: Record<string, unknown>, finish: string | null = null) => JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
const usageChunk = JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14, prompt_tokens_details: { cached_tokens: 2 }, completion_tokens_details: { reasoning_tokens: 1 } } });
const meta = (finishReason: StreamMeta['finishReason'], usage: StreamMeta['usage'] = { input: 10, output: 4, cached: 2 }): StreamMeta => ({ usage, estimatedOutput: 4, finishReason, failed: false });
const echo = { instructions: null, tools: [], tool_choice: 'auto', parallel_tool_calls: true, temperature: null, top_p: null, text: { format: { type: 'text' } }, metadata: {} };

function run(chunks: string[], end: StreamMeta, settings: Record<string, unknown> = echo): Event[] {
  const writer = new ResponseStreamWriter('my-model', settings);
  let text = writer.start();
  for (const c of chunks) text += writer.chunk(c);
  return events(text + writer.end(end));
}

function expectNumbered(list: Event[]): void {
  list.forEach((e, i) => {
    expect(e.data.sequence_number).toBe(i);
    expect(e.data.type).toBe(e.event);
  });
}

describe('Responses stream writer', () => {
  const block = { type: 'thinking', thinking: 'Look it up.', signature: 'sig-1' };
  const thinkingChunks = [chunk({ role: 'assistant', content: '' }), chunk({ reasoning_content: 'Look ' }), chunk({ reasoning_content: 'it up.' }), chunk({ thinking_blocks: [block] }), chunk({ content: 'Sunny.' }), chunk({}, 'stop')];

  it('streams reasoning as a reasoning item with its summary when one was asked for, closed by the whole block as encrypted_content', () => {
    const list = run(thinkingChunks, meta('stop'), { ...echo, reasoning: { effort: 'low', summary: 'auto' } });
    expectNumbered(list);
    expect(list.map((e) => e.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const done = list[8]!.data.item;
    expect(done).toMatchObject({ type: 'reasoning', status: 'completed', summary: [{ type: 'summary_text', text: 'Look it up.' }] });
    expect(decodeThinking(done.encrypted_content)).toEqual([block]);
    const final = list.at(-1)!.data.response;
    expect(final.output.map((item: { type: string }) => item.type)).toEqual(['reasoning', 'message']);
    expect(final.output[0].encrypted_content).toBe(done.encrypted_content);
    expect(final.output[0].id).toBe(done.id);
    expect(list[9]!.data.output_index).toBe(1);
  });

  it('streams no summary when none was asked for, and still closes the item with the block', () => {
    const list = run(thinkingChunks, meta('stop'));
    expect(list.map((e) => e.event).slice(2, 4)).toEqual(['response.output_item.added', 'response.output_item.done']);
    expect(list[3]!.data.item.summary).toEqual([]);
    expect(decodeThinking(list[3]!.data.item.encrypted_content)).toEqual([block]);
  });

  it('closes reasoning that came without a block when the text or a tool call starts', () => {
    const list = run([chunk({ reasoning_content: 'Hm.' }), chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'w', arguments: '{}' } }] }), chunk({}, 'tool_calls')], meta('tool_calls'));
    const types = list.map((e) => `${e.event}:${e.data.item?.type ?? ''}`);
    expect(types.indexOf('response.output_item.done:reasoning')).toBeLessThan(types.indexOf('response.output_item.added:function_call'));
    expect(list.at(-1)!.data.response.output[0]).not.toHaveProperty('encrypted_content');
  });

  it('streams text as a message item and completes with the whole response and usage', () => {
    const list = run([chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hel' }), chunk({ content: 'lo' }), chunk({}, 'stop'), usageChunk], meta('stop'));
    expectNumbered(list);
    expect(list.map((e) => e.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(list[0]?.data.response).toMatchObject({ object: 'response', status: 'in_progress', model: 'my-model', output: [], usage: null });
    expect(list[6]?.data).toMatchObject({ output_index: 0, content_index: 0, text: 'Hello' });
    const done = list.at(-1)?.data.response;
    expect(done).toMatchObject({
      id: list[0]?.data.response.id,
      status: 'completed',
      incomplete_details: null,
      error: null,
      output: [{ type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hello', annotations: [] }] }],
      usage: { input_tokens: 10, input_tokens_details: { cached_tokens: 2, cache_write_tokens: 0 }, output_tokens: 4, output_tokens_details: { reasoning_tokens: 1 }, total_tokens: 14 },
    });
    expect(done.id).toMatch(/^resp_/);
    expect(done.output[0].id).toMatch(/^msg_/);
  });

  it('closes the message when a tool call starts, and streams each call as a function_call item', () => {
    const list = run(
      [
        chunk({ role: 'assistant', content: 'Let me check.' }),
        chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
        chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{}' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
        chunk({}, 'tool_calls'),
      ],
      meta('tool_calls'),
    );
    expectNumbered(list);
    expect(list.map((e) => `${e.event}${e.data.output_index ?? ''}`)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added0',
      'response.content_part.added0',
      'response.output_text.delta0',
      'response.output_text.done0',
      'response.content_part.done0',
      'response.output_item.done0',
      'response.output_item.added1',
      'response.function_call_arguments.delta1',
      'response.output_item.added2',
      'response.function_call_arguments.delta2',
      'response.function_call_arguments.delta1',
      'response.function_call_arguments.done1',
      'response.output_item.done1',
      'response.function_call_arguments.done2',
      'response.output_item.done2',
      'response.completed',
    ]);
    expect(list[8]?.data.item).toMatchObject({ type: 'function_call', call_id: 'call_a', name: 'get_weather', arguments: '', status: 'in_progress' });
    expect(list.at(-1)?.data.response.output.slice(1)).toMatchObject([
      { type: 'function_call', call_id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' },
      { type: 'function_call', call_id: 'call_b', name: 'get_time', arguments: '{}', status: 'completed' },
    ]);
  });

  it('ends an answer cut by max tokens as response.incomplete with reason max_output_tokens', () => {
    const list = run([chunk({ role: 'assistant', content: 'Hel' }), chunk({}, 'length')], meta('max_tokens'));
    const last = list.at(-1);
    expect(last?.event).toBe('response.incomplete');
    expect(last?.data.response).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output: [{ status: 'incomplete' }] });
    expect(run([chunk({}, 'content_filter')], meta('content_filter')).at(-1)?.data.response.incomplete_details).toEqual({ reason: 'content_filter' });
  });

  it('renders an empty answer as one message with empty text', () => {
    const list = run([chunk({ role: 'assistant', content: '' }), chunk({}, 'stop')], meta('stop'));
    expect(list.at(-1)?.data.response.output).toMatchObject([{ type: 'message', content: [{ type: 'output_text', text: '' }] }]);
    expect(list.map((e) => e.event)).not.toContain('response.output_text.delta');
  });

  it('ends a failed stream with an error event (fields flat and nested), then response.failed, numbered on', () => {
    const writer = new ResponseStreamWriter('my-model', echo);
    let text = writer.start() + writer.chunk(chunk({ role: 'assistant', content: 'Hel' }));
    text += writer.error(new GatewayError('UNAUTHORIZED', 'The API key was deleted.'));
    // Nothing follows an ending.
    expect(writer.end(meta('stop'))).toBe('');
    const list = events(text);
    expectNumbered(list);
    const [error, failed] = list.slice(-2);
    expect(error?.event).toBe('error');
    expect(error?.data).toMatchObject({ code: 'UNAUTHORIZED', message: 'The API key was deleted.', param: null, error: { type: 'authentication_error', code: 'UNAUTHORIZED', message: 'The API key was deleted.' } });
    expect(failed?.event).toBe('response.failed');
    expect(failed?.data.response).toMatchObject({ status: 'failed', error: { code: 'server_error', message: 'The API key was deleted.', gateway_code: 'UNAUTHORIZED' }, output: [{ type: 'message', status: 'incomplete', content: [{ text: 'Hel' }] }] });
    expect(list.map((e) => e.event)).not.toContain('response.completed');
  });

  it('ignores chunks it cannot read and choices other than the first', () => {
    const writer = new ResponseStreamWriter('m', echo);
    expect(writer.chunk('not json')).toBe('');
    expect(writer.chunk('[1,2]')).toBe('');
    expect(writer.chunk(JSON.stringify({ choices: [{ index: 1, delta: { content: 'other' } }] }))).toBe('');
  });
});

describe('Responses stream writer: tools as the client declared them', () => {
  it('streams a custom tool call whole, its input once the arguments are complete', () => {
    const writer = new ResponseStreamWriter('my-model', echo, new Map([['exec', { name: 'exec', custom: true }]]));
    let text = writer.start();
    text += writer.chunk(chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_9', type: 'function', function: { name: 'exec', arguments: '' } }] }));
    text += writer.chunk(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"input":"te' } }] }));
    text += writer.chunk(chunk({ tool_calls: [{ index: 0, function: { arguments: 'xt(1)"}' } }] }));
    text += writer.chunk(chunk({}, 'tool_calls'));
    const list = events(text + writer.end(meta('tool_calls')));
    expectNumbered(list);
    expect(list.some((e) => e.event === 'response.function_call_arguments.delta')).toBe(false);
    expect(list.find((e) => e.event === 'response.output_item.added')?.data.item).toMatchObject({ type: 'custom_tool_call', call_id: 'call_9', name: 'exec', input: '' });
    expect(list.find((e) => e.event === 'response.custom_tool_call_input.done')?.data.input).toBe('text(1)');
    expect(list.find((e) => e.event === 'response.output_item.done')?.data.item).toMatchObject({ type: 'custom_tool_call', call_id: 'call_9', name: 'exec', input: 'text(1)', status: 'completed' });
    expect(list.at(-1)?.data.response.output).toMatchObject([{ type: 'custom_tool_call', input: 'text(1)' }]);
  });
});
