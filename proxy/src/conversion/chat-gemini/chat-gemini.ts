import type { StreamMeta } from '../../providers/adapter.js';
import type { GeminiRequest, GeminiResponse } from '../../providers/gemini/gemini-wire.js';
import type { Conversion } from '../conversion.js';
import { toGeminiRequest, type GeminiRequestOptions } from './gemini-request.js';
import { toChatCompletion, type AnswerContext } from './gemini-response.js';
import type { CompletionResult } from '../../request/internal-request.js';
import { GeminiStreamTranslator, type StreamContext } from './gemini-stream.js';
import { jsonBytes } from '../../request/json-bytes.js';

/** The internal request ⇄ Gemini's generateContent: `gemini` entries and Gemini models on `vertex`. */
export const chatGemini: Conversion<{
  request: Parameters<typeof toGeminiRequest>[0];
  requestSettings: GeminiRequestOptions;
  converted: GeminiRequest;
  answer: GeminiResponse;
  answerSettings: AnswerContext & { provider: string };
  rendered: CompletionResult;
  streamSettings: StreamContext & { meta: StreamMeta };
  translator: GeminiStreamTranslator;
}> = {
  client: 'chat',
  provider: 'gemini',
  toRequest: toGeminiRequest,
  fromResponse: (response, ctx) => {
    const { body, usage, finish } = toChatCompletion(response, ctx, ctx.provider);
    return { status: 200, body: jsonBytes(body), usage, finishReason: finish.gateway, rawFinishReason: finish.raw };
  },
  streamTranslator: ({ meta, ...ctx }) => new GeminiStreamTranslator(meta, ctx),
};
