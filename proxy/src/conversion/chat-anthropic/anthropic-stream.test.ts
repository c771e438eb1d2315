import { GatewayError } from '@gateway/shared';
import { describe, expect, it } from 'vitest';
import { newStreamMeta } from '../../providers/stream-inspector.js';
import { StreamTranslator } from './anthropic-stream.js';

type Chunk = {
  id: string;
  object: string;
  model: string;
  choices: { index: number; delta: { role?: string; content?: string; reasoning_content?: string; thinking_blocks?: unknown[]; tool_calls?: { index: number; id?: string; type?: string; function: { name?: string; arguments?: string } }[] }; finish_reason: string | null }[];
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number; prompt_tokens_details: { cached_tokens: number } };
};

function run(events: Record<string, unknown>[], clientWantsUsage = false) {
  const meta = newStreamMeta();
  const translator = new StreamTranslator('anthropic', meta, clientWantsUsage, 'req-1', 'claude-upstream', 1_700_000_000_000);
  const out: string[] = [];
  for (const event of events) translator.push(JSON.stringify(event), out);
  return { meta, translator, chunks: out.map((c) => JSON.parse(c) as Chunk) };
}

const start = (usage: Record<string, number> = { input_tokens: 10, output_tokens: 1 }) => ({
  type: 'message_start',
  message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-haiku-4-5-20251001', content: [], stop_reason: null, usage },
});
const textStart = (index: number) => ({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
const text = (index: number, t: string) => ({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: t } });
const stop = (index: number) => ({ type: 'content_block_stop', index });
const delta = (stopReason: string | null, usage: Record<string, number>) => ({ type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage });
const end = { type: 'message_stop' };

describe('Anthropic stream events → OpenAI chunks', () => {
  it('gives the role chunk on message_start, then content, then one finish chunk', () => {
    const { chunks, meta, translator } = run([start(), textStart(0), { type: 'ping' }, text(0, 'Hel'), text(0, 'lo "x"'), stop(0), delta('end_turn', { output_tokens: 3 }), end]);
    expect(chunks.map((c) => c.choices[0]?.delta)).toEqual([{ role: 'assistant', content: '' }, { content: 'Hel' }, { content: 'lo "x"' }, {}]);
    expect(chunks.map((c) => c.choices[0]?.finish_reason)).toEqual([null, null, null, 'stop']);
    for (const c of chunks) expect(c).toMatchObject({ id: 'chatcmpl-msg_1', object: 'chat.completion.chunk', model: 'claude-haiku-4-5-20251001' });
    expect(translator.finished).toBe(true);
    expect(meta.finishReason).toBe('stop');
    expect(meta.usage).toEqual({ input: 10, output: 3, cached: 0 });
    expect(meta.estimatedOutput).toBeGreaterThan(0);
  });

  it('numbers tool calls by their own counter, not by Anthropic’s block index', () => {
    const { chunks, meta } = run([
      start(),
      textStart(0),
      text(0, 'Checking.'),
      stop(0),
      { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_A', name: 'get_weather', input: {} } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"city":' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '"Paris"}' } },
      stop(1),
      { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_B', name: 'get_time', input: {} } },
      stop(2),
      delta('tool_use', { output_tokens: 30 }),
      end,
    ]);
    const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(calls).toEqual([
      { index: 0, id: 'toolu_A', type: 'function', function: { name: 'get_weather', arguments: '' } },
      { index: 0, function: { arguments: '{"city":' } },
      { index: 0, function: { arguments: '"Paris"}' } },
      { index: 1, id: 'toolu_B', type: 'function', function: { name: 'get_time', arguments: '' } },
      // A call without input still has arguments: an empty object.
      { index: 1, function: { arguments: '{}' } },
    ]);
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('tool_calls');
    expect(meta.finishReason).toBe('tool_calls');
  });

  it('streams thinking as reasoning_content deltas, and each block whole with its signature as thinking_blocks', () => {
    const { chunks } = run([
      start(),
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Hmm.' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'abc' } },
      stop(0),
      { type: 'content_block_start', index: 1, content_block: { type: 'redacted_thinking', data: 'xyz' } },
      stop(1),
      textStart(2),
      text(2, 'Hi'),
      stop(2),
      delta('end_turn', { output_tokens: 5 }),
      end,
    ]);
    expect(chunks.map((c) => c.choices[0]?.delta)).toEqual([
      { role: 'assistant', content: '' },
      { reasoning_content: 'Hmm.' },
      { thinking_blocks: [{ type: 'thinking', thinking: 'Hmm.', signature: 'abc' }] },
      { thinking_blocks: [{ type: 'redacted_thinking', data: 'xyz' }] },
      { content: 'Hi' },
      {},
    ]);
  });

  it('sends no block for thinking that ended without its signature (a cut stream), only its text', () => {
    const { chunks } = run([
      start(),
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Hmm.' } },
      stop(0),
      delta('end_turn', { output_tokens: 5 }),
      end,
    ]);
    expect(chunks.map((c) => c.choices[0]?.delta)).toEqual([{ role: 'assistant', content: '' }, { reasoning_content: 'Hmm.' }, {}]);
  });

  it('counts the whole prompt, cache reads and writes included, and takes the latest cumulative usage', () => {
    const { meta, chunks } = run(
      [
        start({ input_tokens: 5, cache_read_input_tokens: 3, cache_creation_input_tokens: 4, output_tokens: 1 }),
        textStart(0),
        text(0, 'Hi'),
        delta(null, { output_tokens: 2 }),
        delta('max_tokens', { output_tokens: 7 }),
        end,
      ],
      true,
    );
    expect(meta.usage).toEqual({ input: 12, output: 7, cached: 3, cacheWrite: 4 });
    expect(meta.finishReason).toBe('max_tokens');
    const finishes = chunks.filter((c) => c.choices[0]?.finish_reason);
    expect(finishes.map((c) => c.choices[0]?.finish_reason)).toEqual(['length']);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19, prompt_tokens_details: { cached_tokens: 3 } } });
  });

  it('takes input counts from message_delta when Anthropic sends them there', () => {
    const { meta } = run([start({ input_tokens: 0, output_tokens: 0 }), delta('end_turn', { input_tokens: 20, cache_read_input_tokens: 5, output_tokens: 4 }), end]);
    expect(meta.usage).toEqual({ input: 25, output: 4, cached: 5 });
  });

  it('yields the usage chunk only when the client asked for it', () => {
    const events = [start(), textStart(0), text(0, 'Hi'), delta('end_turn', { output_tokens: 1 }), end];
    expect(run(events).chunks.some((c) => c.usage !== undefined)).toBe(false);
    expect(run(events, true).chunks.at(-1)?.choices).toEqual([]);
  });

  it('maps refusal to content_filter and keeps an unknown stop reason raw', () => {
    const refused = run([start(), delta('refusal', { output_tokens: 0 }), end]);
    expect(refused.chunks.at(-1)?.choices[0]?.finish_reason).toBe('content_filter');
    expect(refused.meta.finishReason).toBe('content_filter');
    const paused = run([start(), delta('pause_turn', { output_tokens: 0 }), end]);
    expect(paused.chunks.at(-1)?.choices[0]?.finish_reason).toBe('stop');
    expect(paused.meta).toMatchObject({ finishReason: 'stop', rawFinishReason: 'pause_turn' });
  });

  it('marks the stream failed on an error event, and ignores event types it does not know', () => {
    const { meta, chunks } = run([start(), { type: 'some_future_event', value: 1 }, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }]);
    expect(chunks).toHaveLength(1);
    expect(meta.failed).toBe(true);
  });

  it('fails on an event that is not JSON', () => {
    const translator = new StreamTranslator('anthropic', newStreamMeta(), false, 'r', 'm');
    expect(() => translator.push('{not json', [])).toThrow(GatewayError);
  });
});
