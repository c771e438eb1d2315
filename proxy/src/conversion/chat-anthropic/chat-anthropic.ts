import type { StreamMeta } from '../../providers/adapter.js';
import type { AnthropicRequest, AnthropicResponse } from '../../providers/anthropic/anthropic-types.js';
import type { Conversion } from '../conversion.js';
import { toAnthropicRequest, type RequestSettings } from './anthropic-request.js';
import { toChatCompletion } from './anthropic-response.js';
import type { CompletionResult } from '../../request/internal-request.js';
import { StreamTranslator } from './anthropic-stream.js';
import { jsonBytes } from '../../request/json-bytes.js';

/** The internal request ⇄ Anthropic's Messages API: `anthropic` entries and Claude models on `vertex`. */
export const chatAnthropic: Conversion<{
  request: Readonly<Record<string, unknown>>;
  requestSettings: RequestSettings;
  converted: AnthropicRequest;
  answer: AnthropicResponse;
  /** The model named when the message names none. */
  answerSettings: { fallbackModel: string };
  rendered: CompletionResult;
  streamSettings: { provider: string; meta: StreamMeta; clientWantsUsage: boolean; requestId: string; fallbackModel: string };
  translator: StreamTranslator;
}> = {
  client: 'chat',
  provider: 'anthropic',
  toRequest: toAnthropicRequest,
  fromResponse: (message, { fallbackModel }) => {
    const { body, usage, finish } = toChatCompletion(message, fallbackModel);
    return { status: 200, body: jsonBytes(body), usage, finishReason: finish.gateway, rawFinishReason: finish.raw };
  },
  streamTranslator: (s) => new StreamTranslator(s.provider, s.meta, s.clientWantsUsage, s.requestId, s.fallbackModel),
};
