import { describe, expect, it } from 'vitest';
import { ChunkAssembler } from './chunk-assembler.js';
import { completionChunks } from './completion-chunks.js';

const completion = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1700000000,
  model: 'm',
  choices: [
    { index: 0, message: { role: 'assistant', content: 'Hello there', refusal: null }, logprobs: null, finish_reason: 'stop' },
    {
      index: 1,
      message: { role: 'assistant', content: null, refusal: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
      logprobs: null,
      finish_reason: 'tool_calls',
    },
  ],
  usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 },
};

describe('a completion through chunks and back', () => {
  it('is the same completion', () => {
    const assembler = new ChunkAssembler();
    for (const chunk of completionChunks(completion, true)) assembler.add(chunk);
    expect(assembler.completion(null)).toEqual(completion);
    expect(assembler.filtered).toBe(false);
  });

  it('leaves the usage chunk out unless asked, and then takes the metered counts', () => {
    const chunks = completionChunks(completion, false);
    expect(chunks.some((c) => c.includes('"usage"'))).toBe(false);
    const assembler = new ChunkAssembler();
    for (const chunk of chunks) assembler.add(chunk);
    expect(assembler.completion({ input: 3, output: 5 }).usage).toEqual({ prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 });
  });

  it('joins split content and tool-call arguments, and sees a content_filter finish', () => {
    const assembler = new ChunkAssembler();
    const head = { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm' };
    assembler.add(JSON.stringify({ ...head, choices: [{ index: 0, delta: { role: 'assistant', content: 'He' } }] }));
    assembler.add(JSON.stringify({ ...head, choices: [{ index: 0, delta: { content: 'llo' } }] }));
    assembler.add(JSON.stringify({ ...head, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'x', type: 'function', function: { name: 'g', arguments: '{"b"' } }] } }] }));
    assembler.add(JSON.stringify({ ...head, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: ':2}' } }] } }] }));
    assembler.add(JSON.stringify({ ...head, choices: [{ index: 0, delta: {}, finish_reason: 'content_filter' }] }));
    const message = (assembler.completion(null).choices as { message: Record<string, unknown> }[])[0]!.message;
    expect(message.content).toBe('Hello');
    expect(message.tool_calls).toEqual([{ id: 'x', type: 'function', function: { name: 'g', arguments: '{"b":2}' } }]);
    expect(assembler.filtered).toBe(true);
  });
});
