import { describe, expect, it } from 'vitest';
import { mapFinishReason } from './finish-reason.js';

describe('OpenAI finish reasons', () => {
  it("maps OpenAI's reasons and keeps an unknown one as the raw reason", () => {
    expect(mapFinishReason('stop')).toEqual({ finishReason: 'stop' });
    expect(mapFinishReason('length')).toEqual({ finishReason: 'max_tokens' });
    expect(mapFinishReason('tool_calls')).toEqual({ finishReason: 'tool_calls' });
    expect(mapFinishReason('function_call')).toEqual({ finishReason: 'tool_calls' });
    expect(mapFinishReason('content_filter')).toEqual({ finishReason: 'content_filter' });
    expect(mapFinishReason(null)).toEqual({ finishReason: 'stop' });
    expect(mapFinishReason('eos')).toEqual({ finishReason: 'stop', rawFinishReason: 'eos' });
    expect(mapFinishReason('toString')).toEqual({ finishReason: 'stop', rawFinishReason: 'toString' });
  });
});
