import { estimatePromptTokens } from '../../policy/token-estimate.js';
import type { InboundProtocol, ParsedRequest } from '../protocol.js';
import { anthropicErrorBody, anthropicStreamError } from './anthropic-errors.js';
import { MessageStreamWriter } from './message-stream-writer.js';
import { parseMessagesRequest } from './parse-request.js';
import { renderMessage } from './render-message.js';

/**
 * Anthropic's Messages API (POST /v1/messages): the Anthropic body is translated into the
 * internal request on the way in, the internal answer into an Anthropic message or event stream
 * on the way out, and errors take Anthropic's shape.
 */
export const anthropicMessages: InboundProtocol = {
  endpoint: 'messages',
  parse: (body: unknown, raw: Buffer) => parseMessagesRequest(body, raw),
  render: (result, request) => renderMessage(result, request.model),
  streamWriter: (request: ParsedRequest) => new MessageStreamWriter(request.model, estimatePromptTokens(request.chat)),
  errorBody: anthropicErrorBody,
  streamError: anthropicStreamError,
};
