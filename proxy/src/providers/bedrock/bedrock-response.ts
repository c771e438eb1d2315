import { GatewayError } from '@gateway/shared';
import type { Usage } from '../adapter.js';
import { mapStopReason, openAiUsage, usageFrom, type MappedFinish } from './bedrock-usage.js';
import type { BedrockResponse } from './bedrock-wire.js';

/**
 * A Converse answer as an OpenAI `chat.completion`: text blocks joined into `content`, `toolUse`
 * blocks as `tool_calls` (their `toolUseId` as the call id, so a tool result finds its call again),
 * reasoning blocks left out (OpenAI's format has no place for them).
 */
export interface Translated {
  body: Record<string, unknown>;
  usage: Usage;
  finish: Readonly<MappedFinish>;
}

export function toChatCompletion(response: BedrockResponse, provider: string, id: string, model: string): Translated {
  const content = response.output?.message?.content;
  if (!Array.isArray(content)) throw new GatewayError('UPSTREAM_ERROR', `Provider ${provider} sent an answer without output.message.content.`);
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
  const message: Record<string, unknown> = { role: 'assistant', content: hasText ? text : calls.length > 0 ? null : '', refusal: null };
  if (calls.length > 0) message.tool_calls = calls;
  return {
    body: {
      id,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [{ index: 0, message, logprobs: null, finish_reason: finish.openai }],
      usage: openAiUsage(usage),
    },
    usage,
    finish,
  };
}
