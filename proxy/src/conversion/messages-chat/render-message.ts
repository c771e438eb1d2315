import type { CompletionResult } from '../../request/internal-request.js';
import { anthropicUsage, stopReason } from '../anthropic-openai.js';
import { messageId } from '../../protocols/anthropic-messages/message-id.js';
import { readThinkingBlocks } from '../../request/thinking-blocks.js';

/**
 * The internal answer (an OpenAI chat.completion) as an Anthropic message: the provider's reasoning
 * first (its `thinking_blocks` as they came, or `reasoning_content` as one unsigned thinking block),
 * the text as one text block, then each tool call as a tool_use block whose `input` is the parsed
 * arguments. Counts
 * come from the adapter's usage (already read from the answer), never from a second reading.
 */
interface CompletionMessage {
  content?: unknown;
  refusal?: unknown;
  tool_calls?: unknown;
  reasoning_content?: unknown;
  thinking_blocks?: unknown;
}

export function renderMessage(result: CompletionResult, model: string): Buffer {
  const completion = JSON.parse(result.body.toString('utf8')) as { id?: unknown; choices?: { message?: CompletionMessage }[] };
  const message = completion.choices?.[0]?.message ?? {};
  const content: Record<string, unknown>[] = thinkingContent(message);
  const text = messageText(message);
  if (text !== '') content.push({ type: 'text', text });
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls as { id?: unknown; function?: { name?: unknown; arguments?: unknown } }[]) {
      content.push({ type: 'tool_use', id: String(call.id ?? ''), name: String(call.function?.name ?? ''), input: toolInput(call.function?.arguments) });
    }
  }
  return Buffer.from(
    JSON.stringify({
      id: messageId(completion.id),
      type: 'message',
      role: 'assistant',
      model,
      content,
      stop_reason: stopReason(result.finishReason),
      stop_sequence: null,
      usage: anthropicUsage(result.usage),
    }),
  );
}

function thinkingContent(message: CompletionMessage): Record<string, unknown>[] {
  const blocks = readThinkingBlocks(message.thinking_blocks);
  if (blocks !== null) return blocks;
  const text = message.reasoning_content;
  return typeof text === 'string' && text !== '' ? [{ type: 'thinking', thinking: text, signature: '' }] : [];
}

/** The answer's text: a string, or text parts some providers send; a refusal is text the client should see. */
function messageText(message: CompletionMessage): string {
  let text = '';
  if (typeof message.content === 'string') text = message.content;
  else if (Array.isArray(message.content)) {
    for (const part of message.content as { text?: unknown }[]) if (typeof part?.text === 'string') text += part.text;
  }
  if (typeof message.refusal === 'string') text += message.refusal;
  return text;
}

/**
 * A tool call's arguments as the object Anthropic's `input` is. Arguments that are not a JSON
 * object (cut short by max_tokens, or malformed by the model) give `{}`: the stop_reason says why.
 */
export function toolInput(args: unknown): Record<string, unknown> {
  if (typeof args !== 'string') return {};
  try {
    const parsed: unknown = JSON.parse(args);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
