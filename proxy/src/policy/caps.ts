import type { ParsedRequest } from '../protocols/protocol.js';
import type { ChatCompletionBody } from '../request/openai-chat.js';

/**
 * Caps that hold whatever the body carries (docs/budgets.md#caps): the request's `n`, and its two
 * output limits when a client sends both.
 */

/** `n` of a chat request (1 when absent; validate-chat.ts refused anything but a positive integer). */
export function completions(parsed: ParsedRequest): number {
  const n = parsed.chat.n;
  return typeof n === 'number' && n > 1 ? n : 1;
}

/**
 * Both max_tokens and max_completion_tokens sent: the larger was checked against the cap and is
 * reserved (ParsedRequest.maxTokens); the provider receives one field, `max_completion_tokens`,
 * holding the smaller, which keeps both of the client's limits and stays within the cap.
 */
export function oneLimitField(ctx: { forward: Buffer | null }, chat: ChatCompletionBody): void {
  chat.max_completion_tokens = Math.min(chat.max_tokens as number, chat.max_completion_tokens as number);
  delete chat.max_tokens;
  ctx.forward = null;
}
