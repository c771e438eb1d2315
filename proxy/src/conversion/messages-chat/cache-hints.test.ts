import { GatewayError } from '@gateway/shared';
import { describe, expect, it } from 'vitest';
import { toBedrockRequest } from '../chat-converse/bedrock-request.js';
import { parseMessagesRequest } from '../../protocols/anthropic-messages/parse-request.js';

const EPHEMERAL = { type: 'ephemeral' };

function chatOf(body: Record<string, unknown>) {
  return parseMessagesRequest(body, Buffer.from(JSON.stringify(body))).chat;
}

function breakpointOf(value: unknown): unknown {
  return (value as { cache_control?: unknown }).cache_control;
}

/** A Claude Code-like prompt: cached system, tools, a tool round trip and the newest turn marked. */
const marked = {
  model: 'claude-x',
  max_tokens: 100,
  system: [{ type: 'text', text: 'Shared instructions.', cache_control: { type: 'ephemeral', ttl: '1h' } }],
  tools: [{ name: 'read_file', input_schema: { type: 'object' }, cache_control: EPHEMERAL }],
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'Read it.' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'Reading.' }, { type: 'tool_use', id: 't1', name: 'read_file', input: {}, cache_control: EPHEMERAL }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'contents', cache_control: EPHEMERAL }] }, { type: 'text', text: 'Now?' }, { type: 'text', text: 'Go.', cache_control: EPHEMERAL }] },
  ],
};

describe('prompt-cache breakpoints of a Messages body on the internal request', () => {
  it('go with what they mark, and never into the JSON an OpenAI-typed provider is sent', () => {
    const chat = chatOf(marked);
    const [system, first, assistant, tool, last] = chat.messages;
    expect(breakpointOf(system)).toEqual({ type: 'ephemeral', ttl: '1h' });
    expect(breakpointOf(first)).toBeUndefined();
    expect(breakpointOf(assistant)).toEqual(EPHEMERAL);
    expect(tool).toMatchObject({ role: 'tool', tool_call_id: 't1' });
    expect(breakpointOf(tool)).toEqual(EPHEMERAL);
    const parts = last?.content as unknown[];
    expect(breakpointOf(parts[0])).toBeUndefined();
    expect(breakpointOf(parts[1])).toEqual(EPHEMERAL);
    expect(breakpointOf((chat.tools as unknown[])[0])).toEqual(EPHEMERAL);
    expect(JSON.stringify(chat)).not.toContain('cache_control');
    expect(JSON.stringify({ ...chat, messages: chat.messages.map((m) => ({ ...m })) })).not.toContain('cache_control');
  });

  it('become Converse cachePoint blocks where Bedrock caches', () => {
    const sent = toBedrockRequest(chatOf(marked) as never) as unknown as Record<string, unknown[]>;
    const point = { cachePoint: { type: 'default' } };
    expect(sent.system).toEqual([{ text: 'Shared instructions.' }, { cachePoint: { type: 'default', ttl: '1h' } }]);
    expect(sent.messages).toEqual([
      { role: 'user', content: [{ text: 'Read it.' }] },
      { role: 'assistant', content: [{ text: 'Reading.' }, { toolUse: { toolUseId: 't1', name: 'read_file', input: {} } }, point] },
      { role: 'user', content: [{ toolResult: { toolUseId: 't1', content: [{ text: 'contents' }] } }, point, { text: 'Now?' }, { text: 'Go.' }, point] },
    ]);
    expect((sent.toolConfig as unknown as { tools: unknown[] }).tools).toEqual([{ toolSpec: expect.objectContaining({ name: 'read_file' }) }, point]);
  });

  it('take the request’s own cache_control (automatic caching) as the last block’s', () => {
    const chat = chatOf({ model: 'claude-x', max_tokens: 100, cache_control: EPHEMERAL, system: 'Be brief.', messages: [{ role: 'user', content: 'Hi' }] });
    expect(breakpointOf(chat.messages[0])).toBeUndefined();
    expect(breakpointOf(chat.messages[1])).toEqual(EPHEMERAL);
    const sent = toBedrockRequest(chat as never) as unknown as { messages: unknown[] };
    expect(sent.messages).toEqual([{ role: 'user', content: [{ text: 'Hi' }, { cachePoint: { type: 'default' } }] }]);
  });

  it('a single text block keeps its breakpoint on the message it collapses into', () => {
    const chat = chatOf({ model: 'claude-x', max_tokens: 100, messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: EPHEMERAL }] }] });
    expect(chat.messages[0]).toEqual({ role: 'user', content: 'Hi' });
    expect(breakpointOf(chat.messages[0])).toEqual(EPHEMERAL);
  });

  it('refuses one Anthropic would not take, naming it in the client’s terms', () => {
    const refused = (body: Record<string, unknown>) => {
      try {
        chatOf(body);
      } catch (err) {
        expect(err).toBeInstanceOf(GatewayError);
        return (err as GatewayError).param;
      }
      throw new Error('accepted');
    };
    const base = { model: 'claude-x', max_tokens: 100 };
    expect(refused({ ...base, messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: { type: 'persistent' } }] }] })).toBe('messages.0.content.0.cache_control');
    expect(refused({ ...base, messages: [{ role: 'user', content: 'Hi' }], cache_control: { type: 'ephemeral', ttl: '1d' } })).toBe('cache_control.ttl');
    expect(refused({ ...base, messages: [{ role: 'user', content: 'Hi' }], tools: [{ name: 'f', input_schema: {}, cache_control: 'yes' }] })).toBe('tools.0.cache_control');
  });
});
