import { estimatePromptTokens } from '../../policy/token-estimate.js';
import type { InboundProtocol, ParsedRequest, StreamWriter } from '../protocol.js';
import { anthropicErrorBody, anthropicStreamError } from './anthropic-errors.js';
import { messagesChat } from '../../conversion/messages-chat/messages-chat.js';
import { parseMessagesRequest } from './parse-request.js';

/**
 * Anthropic's Messages API (POST /v1/messages): the Anthropic body is translated into the
 * internal request on the way in, the internal answer into an Anthropic message or event stream
 * on the way out, and errors take Anthropic's shape. When the serving provider is Anthropic-typed,
 * the client's body goes to it as it came (model name mapped, key swapped) and its answer comes
 * back untranslated (`native`); a fallback to another provider type is translated as usual.
 */
/** An Anthropic-typed provider's own event stream, forwarded frame by frame. */
const PASS_THROUGH: StreamWriter = { start: () => '', chunk: (frame) => frame, end: () => '' };

export const anthropicMessages: InboundProtocol = {
  endpoint: 'messages',
  nativeProtocol: 'anthropic-messages',
  parse: (body: unknown, raw: Buffer, nativeRoute?: (model: string) => boolean) => {
    const parsed = parseMessagesRequest(body, raw, 'create', nativeRoute);
    // Onto the parsed object itself: V8 gives properties added after an object spread a slow path.
    return Object.assign(parsed, { native: { protocol: 'anthropic-messages' as const, body: parsed.anthropic, raw: parsed.anthropicRaw } });
  },
  render: (result, request) => (result.native === true ? result.body : messagesChat.fromResponse(result, { model: request.model })),
  streamWriter: (request: ParsedRequest, _requestId: string, native: boolean) =>
    native ? PASS_THROUGH : messagesChat.streamTranslator({ model: request.model, promptEstimate: request.promptTokens ?? estimatePromptTokens(request.chat) }),
  errorBody: anthropicErrorBody,
  streamError: anthropicStreamError,
};
