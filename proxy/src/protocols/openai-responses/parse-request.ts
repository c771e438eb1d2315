import type { ParsedRequest } from '../protocol.js';
import { scanResponsesRequest } from './scan-request.js';
import { isObject } from './checks.js';
import type { ToolOrigin } from '../../conversion/responses-chat/tools.js';
import { responsesChat } from '../../conversion/responses-chat/responses-chat.js';

/**
 * A Responses API request (`POST /v1/responses`) as the internal Chat Completions request. A
 * stored response is continued by `previous_response_id` (responses/state-step.ts); whatever
 * needs a stored conversation, prompt or file is refused with 400 naming the parameter, as are
 * built-in tools and parameters the gateway could not honour. Parameters that only tune the answer and have no
 * Chat Completions counterpart (`client_metadata`, `context_management`, ones added after this
 * gateway was written) are left out and named (`dropped`).
 */
export interface ResponsesRequest extends ParsedRequest {
  /** The request's settings as the Response object echoes them (instructions, tools, text…). */
  echo: Record<string, unknown>;
  /** Chat tool names that stand for a namespaced or custom tool (tools.ts): the answer's calls are rendered as declared. */
  toolOrigins?: ReadonlyMap<string, ToolOrigin>;
  /** `store` as sent (null: not sent, which means true where the gateway keeps responses). */
  store?: boolean | null;
  /** The response this one continues (`previous_response_id`), or null. */
  previousResponseId?: string | null;
  /** The request's `input` as a list of items (a string is one user message item), as input_items lists them. */
  inputItems?: unknown[];
}

/**
 * The request as the internal one, with the client's body kept for a provider that speaks the
 * Responses API (`native`). `nativeRoute(model)`: every provider of the model's route does; then
 * the body is not translated but read only for what the gateway needs (scan-request.ts), the
 * translation waiting in `translate` for a step that needs it after all (translateScanned).
 */
export function parseResponsesRequest(body: unknown, raw?: Buffer, nativeRoute?: (model: string) => boolean): ResponsesRequest {
  let parsed: ResponsesRequest;
  if (nativeRoute === undefined || !isObject(body) || typeof body.model !== 'string' || !nativeRoute(body.model)) parsed = responsesChat.toRequest(body, undefined);
  else {
    const { chat, model, stream, maxTokens } = scanResponsesRequest(body);
    parsed = { chat, raw: null, model, stream, wantsUsage: true, maxTokens, echo: {}, translate: () => responsesChat.toRequest(body, undefined) };
  }
  if (isObject(body)) parsed.native = raw === undefined ? { protocol: 'openai-responses', body } : { protocol: 'openai-responses', body, raw };
  return parsed;
}

