import type { GatewayError } from '@gateway/shared';
import type { InboundProtocol, ParsedRequest, StreamWriter } from '../protocol.js';
import { parseResponsesRequest, type ResponsesRequest } from './parse-request.js';
import { responsesChat } from '../../conversion/responses-chat/responses-chat.js';

/**
 * OpenAI's Responses API (`POST /v1/responses`): to a provider that serves it (`responses:
 * native`), the client's body as it came and the provider's answer as it was sent; to any other,
 * translated into a chat completion (stateless) and the answer rendered back as a Response object
 * or its event stream. Errors have the OpenAI shape, as on chat completions.
 */
function echoOf(request: ParsedRequest): Readonly<Record<string, unknown>> {
  return (request as Partial<ResponsesRequest>).echo ?? {};
}

function originsOf(request: ParsedRequest): ResponsesRequest['toolOrigins'] {
  return (request as Partial<ResponsesRequest>).toolOrigins;
}

/** A provider's own Response event stream, forwarded frame by frame. */
const PASS_THROUGH: StreamWriter = { start: () => '', chunk: (frame) => frame, end: () => '' };

export const openAiResponses: InboundProtocol = {
  endpoint: 'responses',
  nativeProtocol: 'openai-responses',
  parse: (body: unknown, raw: Buffer, nativeRoute?: (model: string) => boolean) => parseResponsesRequest(body, raw, nativeRoute),
  render: (result, request) => (result.native === true ? result.body : responsesChat.fromResponse(result, { model: request.model, echo: echoOf(request), origins: originsOf(request) })),
  streamWriter: (request, _requestId, native) => (native ? PASS_THROUGH : responsesChat.streamTranslator({ model: request.model, echo: echoOf(request), origins: originsOf(request) })),
  errorBody: (err: GatewayError) => err.toJSON(),
  // Only used when no writer exists; the writer's own `error` numbers the event in its stream.
  streamError: (err: GatewayError) =>
    `event: error\ndata: ${JSON.stringify({ type: 'error', sequence_number: 0, code: err.code, message: err.message, param: err.param, error: err.toBody().error })}\n\n`,
};
