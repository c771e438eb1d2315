import type { ResponsesRequest } from '../../protocols/openai-responses/parse-request.js';
import type { CompletionResult } from '../../request/internal-request.js';
import type { Conversion } from '../conversion.js';
import { renderResponse } from './render-response.js';
import { ResponseStreamWriter } from './response-stream.js';
import { toChatRequest } from './responses-to-chat.js';
import type { ToolOrigin } from './tools.js';

/** What a Response object echoes of its request, and the tools whose calls are rendered as declared (tools.ts). */
interface Echo {
  model: string;
  echo: Readonly<Record<string, unknown>>;
  origins?: ReadonlyMap<string, ToolOrigin> | undefined;
}

/** An OpenAI Responses client ⇄ the internal request: `/v1/responses` to a provider without the Responses API. */
export const responsesChat: Conversion<{
  request: unknown;
  requestSettings: undefined;
  converted: ResponsesRequest;
  answer: CompletionResult;
  answerSettings: Echo;
  rendered: Buffer;
  streamSettings: Echo;
  translator: ResponseStreamWriter;
}> = {
  client: 'responses',
  provider: 'chat',
  toRequest: (body) => toChatRequest(body),
  fromResponse: (result, { model, echo, origins }) => renderResponse(result, model, echo, origins),
  streamTranslator: ({ model, echo, origins }) => new ResponseStreamWriter(model, echo, origins),
};
