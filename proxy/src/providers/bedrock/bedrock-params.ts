import { FRAME, ONE_TEXT_ANSWER, refusalOf, type ParamTable } from '../../conversion/param-support.js';
import { chatConverse } from '../../conversion/chat-converse/chat-converse.js';
import { thinkingDrops } from '../../conversion/chat-anthropic/thinking-plan.js';

/** What an OpenAI-shaped request keeps on its way to Bedrock's Converse API (bedrock-request.ts maps the carried fields). */
export const BEDROCK_PARAMS: ParamTable = {
  provider: 'Bedrock Converse',
  carried: new Set(FRAME),
  rules: {
    ...ONE_TEXT_ANSWER,
    response_format: {
      verdict: 'refuse',
      why: 'it has no JSON mode; describe the format in the prompt or use a tool',
      honoured: (value) => typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'text',
    },
  },
  refusal: (chat) => refusalOf(() => chatConverse.toRequest(chat, undefined)),
};

/**
 * A Claude model's table: the same, and `reasoning_effort` carried as extended thinking, left out
 * where the model would refuse thinking (chat-anthropic/thinking-plan.ts).
 */
export const BEDROCK_CLAUDE_PARAMS: ParamTable = {
  ...BEDROCK_PARAMS,
  carried: new Set([...FRAME, 'reasoning_effort']),
  refusal: (chat) => refusalOf(() => chatConverse.toRequest(chat, { extendedThinking: true, defaultMaxTokens: 1 })),
  dropsOf: thinkingDrops,
};

/** Bedrock's ids of Claude models: `anthropic.claude-…`, an inference profile's `us.anthropic.claude-…`, or an ARN holding one. */
export function isClaudeModel(id: string): boolean {
  return /(^|[./:])anthropic\.claude/.test(id);
}
