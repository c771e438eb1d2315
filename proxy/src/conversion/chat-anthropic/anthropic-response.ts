import type { Usage } from '../../providers/adapter.js';
import { mapStopReason, openAiUsage, usageFrom, type MappedFinish } from '../anthropic-openai.js';
import type { AnthropicResponse } from '../../providers/anthropic/anthropic-types.js';
import type { ThinkingBlock } from '../../request/openai-chat.js';

/**
 * A whole Anthropic message as an OpenAI chat.completion: its text blocks joined into `content`,
 * its tool_use blocks as `tool_calls` (the input object as JSON text), its thinking as
 * `reasoning_content` (the text) and `thinking_blocks` (the blocks, signatures included, to be
 * sent back: LiteLLM's fields, which OpenAI-typed clients ignore), any other block (server tool
 * blocks) left out. The id is the message's, prefixed; `model` is
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
  const thinking: ThinkingBlock[] = [];
  let reasoning = '';
  for (const block of message.content ?? []) {
    if (block.type === 'text' && typeof block.text === 'string') text = text === null ? block.text : text + block.text;
    else if (block.type === 'thinking' && typeof block.thinking === 'string' && typeof block.signature === 'string') {
      thinking.push({ type: 'thinking', thinking: block.thinking, signature: block.signature });
      reasoning += block.thinking;
    } else if (block.type === 'redacted_thinking' && typeof block.data === 'string') thinking.push({ type: 'redacted_thinking', data: block.data });
    else if (block.type === 'tool_use') {
      calls.push({ id: String(block.id ?? `call_${calls.length}`), type: 'function', function: { name: String(block.name ?? ''), arguments: JSON.stringify(block.input ?? {}) } });
    }
  }
  const usage = usageFrom(message.usage);
  const finish = mapStopReason(message.stop_reason);
  const reply: Record<string, unknown> = { role: 'assistant', content: text ?? (calls.length > 0 ? null : ''), refusal: null };
  if (calls.length > 0) reply.tool_calls = calls;
  if (thinking.length > 0) {
    reply.reasoning_content = reasoning;
    reply.thinking_blocks = thinking;
  }
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
