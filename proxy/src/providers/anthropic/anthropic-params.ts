import { FRAME, ONE_TEXT_ANSWER, refusalOf, type ParamTable } from '../../conversion/param-support.js';
import { isObject } from '../../conversion/json-fields.js';
import { chatAnthropic } from '../../conversion/chat-anthropic/chat-anthropic.js';
import { thinkingDrops } from '../../conversion/chat-anthropic/thinking-plan.js';

/**
 * What an OpenAI-shaped request keeps on its way to Anthropic's Messages API (anthropic-request.ts
 * maps the carried fields). A JSON schema maps to `output_config.format`; JSON mode without a
 * schema has no counterpart and would change the answer, so it is refused. `reasoning_effort` is
 * extended thinking (thinking-plan.ts), left out where Anthropic would refuse it.
 */
export const ANTHROPIC_PARAMS: ParamTable = {
  provider: 'Anthropic',
  carried: new Set([...FRAME, 'parallel_tool_calls', 'reasoning_effort']),
  rules: {
    ...ONE_TEXT_ANSWER,
    response_format: {
      verdict: 'refuse',
      why: 'it has no JSON mode without a schema; send a json_schema response_format with its schema, describe the format in the prompt or use a tool',
      honoured: (value) => isObject(value) && (value.type === 'text' || (value.type === 'json_schema' && isObject(value.json_schema) && isObject(value.json_schema.schema))),
    },
  },
  refusal: (chat) => refusalOf(() => chatAnthropic.toRequest(chat, { upstreamModel: '', stream: false, defaultMaxTokens: 1 })),
  dropsOf: thinkingDrops,
};
