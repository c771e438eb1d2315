import { Errors } from '@gateway/shared';
import type { Usage } from '../../providers/adapter.js';
import { mapStopReason, usageFrom, type MappedFinish } from './bedrock-usage.js';
import type { BedrockResponse } from '../../providers/bedrock/bedrock-wire.js';
import type { ThinkingBlock } from '../../request/openai-chat.js';

/** A `reasoningContent` block as the internal request's thinking block; null for one that is not whole. */
export function reasoningBlock(value: unknown): ThinkingBlock | null {
  if (typeof value !== 'object' || value === null) return null;
  const r = value as { reasoningText?: { text?: unknown; signature?: unknown }; redactedContent?: unknown };
  if (typeof r.redactedContent === 'string' && r.redactedContent !== '') return { type: 'redacted_thinking', data: r.redactedContent };
  const text = r.reasoningText;
  if (typeof text?.text === 'string' && typeof text.signature === 'string' && text.signature !== '') return { type: 'thinking', thinking: text.text, signature: text.signature };
  return null;
}

/**
 * A Converse answer as an OpenAI `chat.completion`: text blocks joined into `content`, `toolUse`
 * blocks as `tool_calls` (their `toolUseId` as the call id, so a tool result finds its call again),
 * `reasoningContent` blocks (a Claude model's thinking) as `reasoning_content` and `thinking_blocks`,
 * as the Anthropic translation gives them (chat-anthropic/anthropic-response.ts). The answer is written as JSON
 * text directly, each value encoded by JSON.stringify, rather than built as nested objects and
 * stringified: it is sent as it is and never read again.
 */
export interface Translated {
  /** The `chat.completion` as JSON text. */
  json: string;
  usage: Usage;
  finish: MappedFinish;
}

export function toChatCompletion(response: BedrockResponse, provider: string, id: string, model: string): Translated {
  const content = response.output?.message?.content;
  if (!Array.isArray(content)) throw Errors.providerAnswerWithout(provider, 'output.message.content');
  let text = '';
  let hasText = false;
  const calls: { id: string; type: 'function'; function: { name: string; arguments: string } }[] = [];
  const thinking: ThinkingBlock[] = [];
  let reasoning = '';
  for (const block of content) {
    if (block.reasoningContent !== undefined) {
      const found = reasoningBlock(block.reasoningContent);
      if (found !== null) thinking.push(found);
      if (found?.type === 'thinking') reasoning += found.thinking;
    } else if (typeof block.text === 'string') {
      text += block.text;
      hasText = true;
    } else if (typeof block.toolUse === 'object' && block.toolUse !== null) {
      const use = block.toolUse as { toolUseId?: unknown; name?: unknown; input?: unknown };
      calls.push({ id: String(use.toolUseId ?? `call_${calls.length}`), type: 'function', function: { name: String(use.name ?? ''), arguments: JSON.stringify(use.input ?? {}) } });
    }
  }
  const finish = mapStopReason(response.stopReason);
  const usage = usageFrom(response.usage);
  const messageContent = hasText ? JSON.stringify(text) : calls.length > 0 ? 'null' : '""';
  const toolCalls = (calls.length > 0 ? `,"tool_calls":${JSON.stringify(calls)}` : '') + (thinking.length > 0 ? `,"reasoning_content":${JSON.stringify(reasoning)},"thinking_blocks":${JSON.stringify(thinking)}` : '');
  const json =
    `{"id":${JSON.stringify(id)},"object":"chat.completion","created":${Math.floor(Date.now() / 1000)},"model":${JSON.stringify(model)},` +
    `"choices":[{"index":0,"message":{"role":"assistant","content":${messageContent},"refusal":null${toolCalls}},"logprobs":null,"finish_reason":"${finish.openai}"}],` +
    `"usage":{"prompt_tokens":${usage.input},"completion_tokens":${usage.output},"total_tokens":${usage.input + usage.output},"prompt_tokens_details":{"cached_tokens":${usage.cached ?? 0}}}}`;
  return { json, usage, finish };
}
