import { GatewayError } from '@gateway/shared';
import { describe, expect, it } from 'vitest';
import { EPHEMERAL, markedRequest } from '../cache-breakpoint.case.js';
import { toBedrockRequest } from '../../conversion/chat-converse/bedrock-request.js';

/** Prompt-cache breakpoints of an OpenAI-shape request as Converse `cachePoint` blocks after what they mark. */
const POINT = { cachePoint: { type: 'default' } };

function translate(body: Record<string, unknown>) {
  return toBedrockRequest({ model: 'm', ...body });
}

function refusedParam(body: Record<string, unknown>): string | null | undefined {
  try {
    translate(body);
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).code).toBe('INVALID_REQUEST');
    return (err as GatewayError).param;
  }
  throw new Error('accepted');
}

describe('cache_control → Bedrock cachePoint', () => {
  it('puts a checkpoint after a marked text, image or file part, and after a marked tool', () => {
    const out = translate(markedRequest(`data:image/png;base64,${Buffer.from('png').toString('base64')}`));
    const blocks = out.messages[0]?.content as Record<string, unknown>[];
    expect(blocks.map((b) => Object.keys(b)[0])).toEqual(['text', 'cachePoint', 'image', 'cachePoint', 'document', 'cachePoint', 'text']);
    expect(blocks[1]).toEqual(POINT);
    expect(blocks[3]).toEqual({ cachePoint: { type: 'default', ttl: '1h' } });
    expect(out.toolConfig?.tools).toEqual([{ toolSpec: expect.objectContaining({ name: 't1' }) }, POINT, { toolSpec: expect.objectContaining({ name: 't2' }) }]);
  });

  it('puts a message-level breakpoint after the message\'s last block, in system and in turns', () => {
    const out = translate({
      messages: [
        { role: 'system', content: 'preamble', cache_control: EPHEMERAL },
        { role: 'developer', content: [{ type: 'text', text: 'rules', cache_control: { type: 'ephemeral', ttl: '5m' } }, { type: 'text', text: 'more' }] },
        { role: 'user', content: 'question', cache_control: EPHEMERAL },
        { role: 'assistant', content: 'answer' },
        { role: 'user', content: [{ type: 'text', text: 'x' }, { type: 'text', text: 'y' }], cache_control: EPHEMERAL },
      ],
    });
    expect(out.system).toEqual([{ text: 'preamble' }, POINT, { text: 'rules' }, { cachePoint: { type: 'default', ttl: '5m' } }, { text: 'more' }]);
    expect(out.messages[0]?.content).toEqual([{ text: 'question' }, POINT]);
    expect(out.messages[1]?.content).toEqual([{ text: 'answer' }]);
    expect(out.messages[2]?.content).toEqual([{ text: 'x' }, { text: 'y' }, POINT]);
  });

  it('marks a tool result, whose block holds no checkpoint, from the message or one of its parts', () => {
    const call = { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 't', arguments: '{}' } }] };
    for (const result of [
      { role: 'tool', tool_call_id: 'c1', content: 'sunny', cache_control: EPHEMERAL },
      { role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: 'sunny', cache_control: EPHEMERAL }] },
    ]) {
      const out = translate({ messages: [{ role: 'user', content: 'weather?' }, call, result], tools: [{ type: 'function', function: { name: 't' } }] });
      expect(out.messages[2]?.content).toEqual([{ toolResult: { toolUseId: 'c1', content: [{ text: 'sunny' }] } }, POINT]);
    }
  });

  it('sends no checkpoint when nothing is marked', () => {
    const out = translate({ messages: [{ role: 'system', content: 'p' }, { role: 'user', content: [{ type: 'text', text: 'q' }] }], tools: [{ type: 'function', function: { name: 't' } }] });
    expect(JSON.stringify(out)).not.toContain('cachePoint');
  });

  it('refuses anything but an ephemeral breakpoint, or one that marks nothing, naming where it is', () => {
    const marked = (control: unknown) => ({ messages: [{ role: 'user', content: [{ type: 'text', text: 'a', cache_control: control }] }] });
    expect(refusedParam(marked({ type: 'persistent' }))).toBe('messages[0].content[0].cache_control');
    expect(refusedParam(marked('yes'))).toBe('messages[0].content[0].cache_control');
    expect(refusedParam(marked({ type: 'ephemeral', ttl: '2h' }))).toBe('messages[0].content[0].cache_control.ttl');
    expect(refusedParam({ messages: [{ role: 'user', content: [{ type: 'text', text: '', cache_control: EPHEMERAL }] }] })).toBe('messages[0].content[0].cache_control');
    expect(refusedParam({ messages: [{ role: 'user', content: 'q' }], tools: [{ type: 'function', function: { name: 't' }, cache_control: { type: 'forever' } }] })).toBe('tools[0].cache_control');
    expect(refusedParam({ messages: [{ role: 'user', content: 'q' }, { role: 'tool', tool_call_id: 'c', content: [{ type: 'text', text: 'r', cache_control: { ttl: '1h' } }] }] })).toBe('messages[1].content[0].cache_control');
  });
});
