import type { ChatMessage, ThinkingBlock } from './openai-chat.js';

/**
 * A model's reasoning carried through the internal request so it can go back to the provider that
 * made it. Anthropic signs each thinking block and, with thinking on, refuses a tool loop whose
 * last assistant turn does not start with its own blocks unchanged; a Responses client keeps them
 * as the `encrypted_content` of reasoning items (Codex sends `include: ["reasoning.encrypted_content"]`
 * and replays every item), a chat client as LiteLLM's `thinking_blocks`. The gateway's
 * `encrypted_content` is its own encoding of the blocks, not a secret: the provider's signature is
 * what protects them, and one it did not make is refused by it.
 */
const PREFIX = 'gwthink1.';

/** The blocks a value holds when it is a well-formed list of them; null otherwise. */
export function readThinkingBlocks(value: unknown): ThinkingBlock[] | null {
  if (!Array.isArray(value) || value.length === 0) return null;
  const blocks: ThinkingBlock[] = [];
  for (const block of value as unknown[]) {
    if (typeof block !== 'object' || block === null) return null;
    const b = block as { type?: unknown; thinking?: unknown; signature?: unknown; data?: unknown };
    if (b.type === 'thinking' && typeof b.thinking === 'string' && typeof b.signature === 'string' && b.signature !== '') blocks.push({ type: 'thinking', thinking: b.thinking, signature: b.signature });
    else if (b.type === 'redacted_thinking' && typeof b.data === 'string' && b.data !== '') blocks.push({ type: 'redacted_thinking', data: b.data });
    else return null;
  }
  return blocks;
}

/**
 * A streamed block once it ended: redacted content as it came, or the text with its signature;
 * null for thinking that ended without a signature (a cut stream), which no provider takes back.
 */
export function streamedBlock(thinking: string, signature: string, redacted: string | null): ThinkingBlock | null {
  if (redacted !== null && redacted !== '') return { type: 'redacted_thinking', data: redacted };
  return signature === '' ? null : { type: 'thinking', thinking, signature };
}

/** The blocks an assistant message carries, written by its client or carried by the gateway. */
export function thinkingOf(message: Readonly<ChatMessage>): ThinkingBlock[] | null {
  return readThinkingBlocks(message.thinking_blocks);
}

/**
 * Sets `blocks` on `message` out of sight of JSON (as cache breakpoints are carried,
 * messages-chat/cache-hints.ts): an adapter reads them as it reads a chat client's own, while a
 * provider that takes the internal request as JSON is never sent a field its client did not write.
 */
export function carryThinking(message: ChatMessage, blocks: readonly ThinkingBlock[]): void {
  const all = [...(readThinkingBlocks(message.thinking_blocks) ?? []), ...blocks];
  Object.defineProperty(message, 'thinking_blocks', { value: all, enumerable: false, writable: true, configurable: true });
}

/** The blocks as a reasoning item's `encrypted_content`. */
export function encodeThinking(blocks: readonly ThinkingBlock[]): string {
  return PREFIX + Buffer.from(JSON.stringify(blocks), 'utf8').toString('base64url');
}

/** The blocks an `encrypted_content` the gateway made holds; null for another's (OpenAI's own) or a damaged one. */
export function decodeThinking(value: unknown): ThinkingBlock[] | null {
  if (typeof value !== 'string' || !value.startsWith(PREFIX)) return null;
  try {
    return readThinkingBlocks(JSON.parse(Buffer.from(value.slice(PREFIX.length), 'base64url').toString('utf8')));
  } catch {
    return null;
  }
}

/** The messages with carried blocks made plain fields, for storing as JSON (and `restoreThinking` on the way back). */
export function withThinkingShown(messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.map((message) => {
    const blocks = Object.hasOwn(message, 'thinking_blocks') && !Object.prototype.propertyIsEnumerable.call(message, 'thinking_blocks') ? thinkingOf(message) : null;
    return blocks === null ? message : { ...message, thinking_blocks: blocks };
  });
}

/** Stored messages with their blocks carried again out of sight of JSON. */
export function restoreThinking(messages: ChatMessage[]): ChatMessage[] {
  for (const message of messages) {
    const blocks = message.role === 'assistant' ? readThinkingBlocks(message.thinking_blocks) : null;
    if (blocks === null) continue;
    delete message.thinking_blocks;
    carryThinking(message, blocks);
  }
  return messages;
}
