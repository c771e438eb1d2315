import { describe, expect, it } from 'vitest';
import { newStreamMeta } from '../stream-inspector.js';
import { NativeStreamMeter } from './native-stream-meter.js';

const frames: [string, unknown][] = [
  ['message_start', { type: 'message_start', message: { id: 'msg_1', model: 'claude', usage: { input_tokens: 5, cache_read_input_tokens: 2, cache_creation_input_tokens: 4, output_tokens: 1 } } }],
  ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
  ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello there, \\"friend\\"' } }],
  ['ping', { type: 'ping' }],
  ['content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"city":"Paris"}' } }],
  ['content_block_stop', { type: 'content_block_stop', index: 0 }],
  ['message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } }],
  ['message_stop', { type: 'message_stop' }],
];

describe('NativeStreamMeter', () => {
  it('reads the counts, the stop reason and an estimate from a native stream without translating it', () => {
    const meta = newStreamMeta();
    const meter = new NativeStreamMeter(meta);
    for (const [name, data] of frames.slice(0, 5)) meter.read(name, JSON.stringify(data));
    expect(meta.usage).toBeNull();
    expect(meta.estimatedOutput).toBeGreaterThan(0);
    expect(meter.finished).toBe(false);
    for (const [name, data] of frames.slice(5)) meter.read(name, JSON.stringify(data));
    expect(meter.finished).toBe(true);
    // The whole prompt (cache reads and writes included), the cached part apart: as the translation counts it.
    expect(meta.usage).toEqual({ input: 11, output: 9, cached: 2, cacheWrite: 4 });
    expect(meta.finishReason).toBe('tool_calls');
    expect(meta.failed).toBe(false);
  });

  it('keeps an unknown stop reason as the raw one, and marks an error event failed', () => {
    const meta = newStreamMeta();
    const meter = new NativeStreamMeter(meta);
    meter.read('message_delta', JSON.stringify({ type: 'message_delta', delta: { stop_reason: 'pause_turn' }, usage: { output_tokens: 2 } }));
    meter.read('message_stop', '{"type":"message_stop"}');
    expect(meta).toMatchObject({ finishReason: 'stop', rawFinishReason: 'pause_turn' });
    const failing = newStreamMeta();
    new NativeStreamMeter(failing).read('error', JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'busy' } }));
    expect(failing.failed).toBe(true);
  });

  it('refuses a counted event that is not JSON', () => {
    expect(() => new NativeStreamMeter(newStreamMeta()).read('message_delta', 'not json')).toThrow(/not JSON/);
  });
});
