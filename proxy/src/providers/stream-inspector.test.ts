import { describe, expect, it } from 'vitest';
import { inspectChunk, newStreamMeta } from './stream-inspector.js';

const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...extra });

describe('inspectChunk', () => {
  it('forwards content chunks as they are and estimates their output, escapes included', () => {
    const meta = newStreamMeta();
    const data = chunk({ content: 'He said \\"finish_reason\\": \\"stop\\" and "usage": {} twelve' });
    expect(inspectChunk(data, meta, false)).toBe(data);
    const text = (JSON.parse(data) as { choices: { delta: { content: string } }[] }).choices[0]!.delta.content;
    expect(meta.estimatedOutput).toBeGreaterThanOrEqual(Math.ceil(text.length / 4));
    expect(meta.finishReason).toBeNull();
    expect(meta.failed).toBe(false);
  });

  it('counts streamed tool-call arguments', () => {
    const meta = newStreamMeta();
    inspectChunk(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":"Paris, France"}' } }] }), meta, false);
    expect(meta.estimatedOutput).toBeGreaterThan(0);
  });

  it('reads the finish reason, and the usage chunk, which only clients who asked see', () => {
    const meta = newStreamMeta();
    inspectChunk(chunk({}, 'length'), meta, false);
    expect(meta.finishReason).toBe('max_tokens');
    const usage = JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 7, completion_tokens: 9, total_tokens: 16 } });
    expect(inspectChunk(usage, meta, false)).toBeNull();
    expect(meta.usage).toEqual({ input: 7, output: 9, cached: 0 });
    expect(inspectChunk(usage, newStreamMeta(), true)).toBe(usage);
  });

  it('parses layouts the scan does not know, and marks error events', () => {
    const meta = newStreamMeta();
    const spaced = '{"choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 3, "completion_tokens": 1}}';
    expect(inspectChunk(spaced, meta, true)).toBe(spaced);
    expect(meta.finishReason).toBe('stop');
    expect(meta.usage).toEqual({ input: 3, output: 1, cached: 0 });
    const failed = newStreamMeta();
    expect(inspectChunk('{"error":{"message":"boom","type":"server_error"}}', failed, false)).toBeNull();
    expect(failed.failed).toBe(true);
  });
});
