import { FRAME, ONE_TEXT_ANSWER, refusalOf, type ParamTable } from '../../conversion/param-support.js';
import { chatConverse } from '../../conversion/chat-converse/chat-converse.js';

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
