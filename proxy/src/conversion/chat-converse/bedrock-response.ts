import { Errors } from '@gateway/shared';
import type { Usage } from '../../providers/adapter.js';
import { mapStopReason, usageFrom, type MappedFinish } from './bedrock-usage.js';
import type { BedrockResponse } from '../../providers/bedrock/bedrock-wire.js';

/**
 * A Converse answer as an OpenAI `chat.completion`: text blocks joined into `content`, `toolUse`
 * blocks as `tool_calls` (their `toolUseId` as the call id, so a tool result finds its call again),
 * reasoning blocks left out (OpenAI's format has no place for them). The answer is written as JSON
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
  for (const block of content) {
    if (typeof block.text === 'string') {
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
  const toolCalls = calls.length > 0 ? `,"tool_calls":${JSON.stringify(calls)}` : '';
  const json =
    `{"id":${JSON.stringify(id)},"object":"chat.completion","created":${Math.floor(Date.now() / 1000)},"model":${JSON.stringify(model)},` +
    `"choices":[{"index":0,"message":{"role":"assistant","content":${messageContent},"refusal":null${toolCalls}},"logprobs":null,"finish_reason":"${finish.openai}"}],` +
    `"usage":{"prompt_tokens":${usage.input},"completion_tokens":${usage.output},"total_tokens":${usage.input + usage.output},"prompt_tokens_details":{"cached_tokens":${usage.cached ?? 0}}}}`;
  return { json, usage, finish };
}
