import { describe, expect, it } from 'vitest';
import { scanCompletion } from './completion-scan.js';

const answer = (extra: Record<string, unknown> = {}) =>
  Buffer.from(
    JSON.stringify({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: 'The key "usage" and "finish_reason": "length" in text {' }, finish_reason: 'tool_calls' }],
      usage: { prompt_tokens: 12, completion_tokens: 34, total_tokens: 46, prompt_tokens_details: { cached_tokens: 3 } },
      ...extra,
    }),
  );

describe('scanCompletion', () => {
  it('reads usage and the finish reason, never the same words inside content', () => {
    expect(scanCompletion(answer())).toEqual({ input: 12, output: 34, cached: 3, finishReason: 'tool_calls' });
  });

  it('agrees with JSON.parse on pretty-printed answers', () => {
    const pretty = Buffer.from(`\n  ${JSON.stringify(JSON.parse(answer().toString()), null, 2)}\n`);
    expect(scanCompletion(pretty)).toEqual({ input: 12, output: 34, cached: 3, finishReason: 'tool_calls' });
  });

  it('counts no usage when there is none, and refuses what is not a JSON object', () => {
    const none = Buffer.from('{"choices":[{"finish_reason":null}]}');
    expect(scanCompletion(none)).toEqual({ input: 0, output: 0, cached: 0, finishReason: null });
    expect(scanCompletion(Buffer.from('<html>bad gateway</html>'))).toBeNull();
    expect(scanCompletion(Buffer.from('[1,2]'))).toBeNull();
  });

  it('ignores a malformed or negative count', () => {
    const odd = Buffer.from('{"choices":[{"finish_reason":"stop"}],"usage":{"prompt_tokens":-5,"completion_tokens":"x"}}');
    expect(scanCompletion(odd)).toEqual({ input: 0, output: 0, cached: 0, finishReason: 'stop' });
  });
});
