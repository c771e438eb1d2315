import type { Usage } from '../../providers/adapter.js';
import { mapStopReason, openAiUsage, usageFrom, type MappedFinish } from '../anthropic-openai.js';
import type { AnthropicResponse } from '../../providers/anthropic/anthropic-types.js';

/**
 * A whole Anthropic message as an OpenAI chat.completion: its text blocks joined into `content`,
 * its tool_use blocks as `tool_calls` (the input object as JSON text), any other block (thinking,
 * redacted_thinking, server tool blocks) left out. The id is the message's, prefixed; `model` is
 * the one Anthropic says answered (a dated name), as an OpenAI-compatible provider's would be.
 */
export interface TranslatedCompletion {
  body: Record<string, unknown>;
  usage: Usage;
  finish: MappedFinish;
}

interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export function toChatCompletion(message: AnthropicResponse, fallbackModel: string, now = Date.now()): TranslatedCompletion {
  let text: string | null = null;
  const calls: ToolCall[] = [];
  for (const block of message.content ?? []) {
    if (block.type === 'text' && typeof block.text === 'string') text = text === null ? block.text : text + block.text;
    else if (block.type === 'tool_use') {
      calls.push({ id: String(block.id ?? `call_${calls.length}`), type: 'function', function: { name: String(block.name ?? ''), arguments: JSON.stringify(block.input ?? {}) } });
    }
  }
  const usage = usageFrom(message.usage);
  const finish = mapStopReason(message.stop_reason);
  const reply: Record<string, unknown> = { role: 'assistant', content: text ?? (calls.length > 0 ? null : ''), refusal: null };
  if (calls.length > 0) reply.tool_calls = calls;
  const body = {
    id: `chatcmpl-${message.id ?? 'anthropic'}`,
    object: 'chat.completion',
    created: Math.floor(now / 1000),
    model: typeof message.model === 'string' && message.model !== '' ? message.model : fallbackModel,
    choices: [{ index: 0, message: reply, logprobs: null, finish_reason: finish.openai }],
    usage: openAiUsage(usage),
  };
  return { body, usage, finish };
}
