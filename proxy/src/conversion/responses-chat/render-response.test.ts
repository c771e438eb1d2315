import { describe, expect, it } from 'vitest';
import type { CompletionResult } from '../../providers/adapter.js';
import { renderResponse } from './render-response.js';
import { decodeThinking } from '../../request/thinking-blocks.js';

const echo = { instructions: 'Be brief.', tools: [], tool_choice: 'auto', parallel_tool_calls: true, temperature: 0.2, top_p: null, text: { format: { type: 'text' } }, metadata: { a: 'b' }, store: false };

function result(message: Record<string, unknown>, finish: string, usage: Record<string, unknown> = { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 }): CompletionResult {
  const body = { id: 'chatcmpl-1', object: 'chat.completion', created: 1_700_000_000, model: 'upstream-name', choices: [{ index: 0, message, finish_reason: finish }], usage };
  return { status: 200, body: Buffer.from(JSON.stringify(body)), usage: { input: 9, output: 3, cached: 0 }, finishReason: finish === 'length' ? 'max_tokens' : (finish as 'stop') };
}

const render = (r: CompletionResult) => JSON.parse(renderResponse(r, 'client-model', echo).toString('utf8')) as Record<string, any>;

describe('chat.completion → Response', () => {
  it('renders thinking blocks as reasoning items first, each with its block as encrypted_content, the summary only when asked for', () => {
    const blocks = [
      { type: 'thinking', thinking: 'Check the weather.', signature: 'sig-1' },
      { type: 'redacted_thinking', data: 'opaque' },
    ];
    const message = { role: 'assistant', content: null, reasoning_content: 'Check the weather.', thinking_blocks: blocks, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'w', arguments: '{}' } }] };
    const plain = render(result(message, 'tool_calls'));
    expect(plain.output.map((item: { type: string }) => item.type)).toEqual(['reasoning', 'reasoning', 'function_call']);
    expect(plain.output[0]).toMatchObject({ type: 'reasoning', status: 'completed', summary: [] });
    expect(plain.output[0].id).toMatch(/^rs_/);
    expect(decodeThinking(plain.output[0].encrypted_content)).toEqual([blocks[0]]);
    expect(decodeThinking(plain.output[1].encrypted_content)).toEqual([blocks[1]]);

    const summarised = JSON.parse(renderResponse(result(message, 'tool_calls'), 'client-model', { ...echo, reasoning: { effort: 'low', summary: 'auto' } }).toString('utf8')) as Record<string, any>;
    expect(summarised.output[0].summary).toEqual([{ type: 'summary_text', text: 'Check the weather.' }]);
    expect(summarised.output[1].summary).toEqual([]);
  });

  it("renders a provider's reasoning_content without blocks as one reasoning item with nothing to send back", () => {
    const response = JSON.parse(renderResponse(result({ role: 'assistant', content: 'Hi', reasoning_content: 'Greet.' }, 'stop'), 'client-model', { ...echo, reasoning: { effort: null, summary: 'auto' } }).toString('utf8')) as Record<string, any>;
    expect(response.output[0]).toMatchObject({ type: 'reasoning', summary: [{ type: 'summary_text', text: 'Greet.' }] });
    expect(response.output[0]).not.toHaveProperty('encrypted_content');
    expect(response.output[1]).toMatchObject({ type: 'message' });
  });

  it('renders text as one completed message item, with the client model, usage and the echoed settings', () => {
    const response = render(result({ role: 'assistant', content: 'Hello there' }, 'stop'));
    expect(response).toMatchObject({
      object: 'response',
      created_at: 1_700_000_000,
      status: 'completed',
      error: null,
      incomplete_details: null,
      model: 'client-model',
      instructions: 'Be brief.',
      temperature: 0.2,
      metadata: { a: 'b' },
      store: false,
      output: [{ type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hello there', annotations: [] }] }],
      usage: { input_tokens: 9, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 }, output_tokens: 3, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 12 },
    });
    expect(response.id).toMatch(/^resp_[0-9a-f]{48}$/);
    expect(response.output[0].id).toMatch(/^msg_/);
  });

  it('reports the prompt tokens a provider wrote to its cache (an Anthropic cache write) as cache_write_tokens', () => {
    const written = result({ role: 'assistant', content: 'Hi' }, 'stop');
    written.usage = { input: 20, output: 3, cached: 5, cacheWrite: 8 };
    expect(render(written).usage).toEqual({ input_tokens: 20, input_tokens_details: { cached_tokens: 5, cache_write_tokens: 8 }, output_tokens: 3, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 23 });
  });

  it('renders tool calls as function_call items and no empty message', () => {
    const response = render(
      result(
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
          ],
        },
        'tool_calls',
      ),
    );
    expect(response.status).toBe('completed');
    expect(response.output).toMatchObject([
      { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' },
      { type: 'function_call', call_id: 'call_2', name: 'get_time', arguments: '{}', status: 'completed' },
    ]);
    expect(response.output[0].id).toMatch(/^fc_/);
  });

  it('makes a length finish incomplete (max_output_tokens), and content_filter incomplete (content_filter)', () => {
    const cut = render(result({ role: 'assistant', content: 'Hel' }, 'length'));
    expect(cut).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output: [{ status: 'incomplete' }] });
    expect(render(result({ role: 'assistant', content: '' }, 'content_filter')).incomplete_details).toEqual({ reason: 'content_filter' });
  });

  it('renders a refusal as a refusal part, and reports cached and reasoning tokens', () => {
    const response = render(
      result({ role: 'assistant', content: null, refusal: 'I cannot help with that.' }, 'stop', {
        prompt_tokens: 9,
        completion_tokens: 3,
        prompt_tokens_details: { cached_tokens: 4 },
        completion_tokens_details: { reasoning_tokens: 2 },
      }),
    );
    expect(response.output[0].content).toEqual([{ type: 'refusal', refusal: 'I cannot help with that.' }]);
    expect(response.usage.output_tokens_details.reasoning_tokens).toBe(2);
  });
});

describe('tool calls as the client declared the tools', () => {
  const origins = new Map([
    ['exec', { name: 'exec', custom: true }],
    ['clock__sleep', { name: 'sleep', namespace: 'clock', custom: false }],
  ]);
  it('renders a custom tool\'s call as a custom_tool_call with its input, and a namespaced function in its namespace', () => {
    const calls = [
      { id: 'call_1', type: 'function', function: { name: 'exec', arguments: JSON.stringify({ input: 'text(42)' }) } },
      { id: 'call_2', type: 'function', function: { name: 'clock__sleep', arguments: '{"duration_ms":5}' } },
      { id: 'call_3', type: 'function', function: { name: 'plain', arguments: '{}' } },
    ];
    const response = JSON.parse(renderResponse(result({ role: 'assistant', content: null, tool_calls: calls }, 'tool_calls'), 'client-model', echo, origins).toString('utf8')) as Record<string, any>;
    expect(response.output).toMatchObject([
      { type: 'custom_tool_call', call_id: 'call_1', name: 'exec', input: 'text(42)', status: 'completed' },
      { type: 'function_call', call_id: 'call_2', name: 'sleep', namespace: 'clock', arguments: '{"duration_ms":5}' },
      { type: 'function_call', call_id: 'call_3', name: 'plain', arguments: '{}' },
    ]);
    expect(response.output[2]).not.toHaveProperty('namespace');
  });
});
