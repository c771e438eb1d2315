import { SSE_DONE, sseData, type GatewayError } from '@gateway/shared';
import type { InboundProtocol, ParsedRequest, StreamWriter } from '../protocol.js';
import { validateChatRequest } from './validate-chat.js';
import type { ChatCompletionBody } from '../../request/openai-chat.js';

/**
 * OpenAI Chat Completions, the protocol the internal shape is made of: the client's body goes to
 * the provider as it came (bytes included), the provider's answer comes back as it was sent, and a
 * stream is each chunk framed as `data: …` with `[DONE]` at the end.
 */
const WRITER: StreamWriter = {
  start: () => '',
  chunk: (data) => sseData(data),
  end: () => SSE_DONE,
};

export const openAiChat: InboundProtocol = {
  endpoint: 'chat.completions',
  parse(body: unknown, raw: Buffer): ParsedRequest {
    const valid = validateChatRequest(body);
    return { chat: body as ChatCompletionBody, raw, model: valid.model, stream: valid.stream, wantsUsage: valid.clientWantsUsage, maxTokens: valid.maxTokens };
  },
  render: (result) => result.body,
  streamWriter: () => WRITER,
  errorBody: (err: GatewayError) => err.toJSON(),
  // Mid-stream: one SSE error event and no [DONE], so the client knows the answer is cut.
  streamError: (err: GatewayError) => sseData(err.toJSON()),
};
