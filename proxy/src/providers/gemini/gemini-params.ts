import { FRAME, ONE_TEXT_ANSWER, refusalOf, type ParamTable } from '../../conversion/param-support.js';
import { chatGemini } from '../../conversion/chat-gemini/chat-gemini.js';

/**
 * What an OpenAI-shaped request keeps on its way to Gemini's generateContent (gemini-request.ts
 * maps the carried fields: seed, penalties, JSON mode and schema, reasoning effort as thinking).
 */
export const GEMINI_PARAMS: ParamTable = {
  provider: 'Gemini',
  carried: new Set([...FRAME, 'seed', 'presence_penalty', 'frequency_penalty', 'response_format', 'reasoning_effort']),
  rules: ONE_TEXT_ANSWER,
  refusal: (chat) => refusalOf(() => chatGemini.toRequest(chat, {})),
};
