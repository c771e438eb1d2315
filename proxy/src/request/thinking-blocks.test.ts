import { describe, expect, it } from 'vitest';
import type { ChatMessage, ThinkingBlock } from './openai-chat.js';
import { carryThinking, decodeThinking, encodeThinking, readThinkingBlocks, restoreThinking, thinkingOf, withThinkingShown } from './thinking-blocks.js';

const blocks: ThinkingBlock[] = [
  { type: 'thinking', thinking: 'Étape 1: look it up.', signature: 'EqQBCgIYAhIM' },
  { type: 'redacted_thinking', data: 'EmwKAhgBEgy3' },
];

describe('thinking blocks', () => {
  it('round-trips through encrypted_content, and reads nothing from content it did not write or that is damaged', () => {
    const encoded = encodeThinking(blocks);
    expect(decodeThinking(encoded)).toEqual(blocks);
    expect(decodeThinking('gAAAAABoOpenAIsOwnOpaqueContent')).toBeNull();
    expect(decodeThinking(`${encoded.slice(0, 20)}!!`)).toBeNull();
    expect(decodeThinking(null)).toBeNull();
  });

  it('reads only well-formed lists of blocks', () => {
    expect(readThinkingBlocks(blocks)).toEqual(blocks);
    expect(readThinkingBlocks([])).toBeNull();
    expect(readThinkingBlocks([{ type: 'thinking', thinking: 'x' }])).toBeNull();
    expect(readThinkingBlocks([{ type: 'text', text: 'x' }])).toBeNull();
    expect(readThinkingBlocks('x')).toBeNull();
  });

  it('carries blocks on a message out of sight of JSON, and keeps them through storage', () => {
    const message: ChatMessage = { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] };
    carryThinking(message, blocks);
    expect(thinkingOf(message)).toEqual(blocks);
    expect(JSON.stringify(message)).not.toContain('thinking');
    expect({ ...message }).not.toHaveProperty('thinking_blocks');

    const stored = JSON.parse(JSON.stringify(withThinkingShown([{ role: 'user', content: 'Hi' }, message]))) as ChatMessage[];
    expect(stored[1]?.thinking_blocks).toEqual(blocks);
    const restored = restoreThinking(stored);
    expect(thinkingOf(restored[1]!)).toEqual(blocks);
    expect(JSON.stringify(restored)).not.toContain('thinking');
  });

  it("leaves a chat client's own thinking_blocks as it wrote them", () => {
    const message: ChatMessage = { role: 'assistant', content: 'Hi', thinking_blocks: [blocks[0]!] };
    expect(withThinkingShown([message])[0]).toBe(message);
    expect(JSON.stringify(message)).toContain('thinking_blocks');
  });
});
