import type { GatewayError } from '@gateway/shared';
import type { InboundProtocol, ParsedRequest } from '../protocol.js';
import { parseResponsesRequest, type ResponsesRequest } from './parse-request.js';
import { renderResponse } from './render-response.js';
import { ResponseStreamWriter } from './response-stream.js';

/**
 * OpenAI's Responses API (`POST /v1/responses`), stateless: the request is translated into a chat
 * completion for whichever provider serves the model, and the answer rendered back as a Response
 * object or its event stream. Errors have the OpenAI shape, as on chat completions.
 */
function echoOf(request: ParsedRequest): Readonly<Record<string, unknown>> {
  return (request as Partial<ResponsesRequest>).echo ?? {};
}

export const openAiResponses: InboundProtocol = {
  endpoint: 'responses',
  parse: (body: unknown) => parseResponsesRequest(body),
  render: (result, request) => renderResponse(result, request.model, echoOf(request)),
  streamWriter: (request) => new ResponseStreamWriter(request.model, echoOf(request)),
  errorBody: (err: GatewayError) => err.toJSON(),
  // Only used when no writer exists; the writer's own `error` numbers the event in its stream.
  streamError: (err: GatewayError) =>
    `event: error\ndata: ${JSON.stringify({ type: 'error', sequence_number: 0, code: err.code, message: err.message, param: err.param, error: err.toBody().error })}\n\n`,
};
