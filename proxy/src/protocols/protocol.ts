import { GatewayError } from '@gateway/shared';
import type { CompletionResult, NativeProtocol, NativeRequest, StreamMeta } from '../request/internal-request.js';
import type { ChatCompletionBody } from '../request/openai-chat.js';

/**
 * An inbound API the gateway serves (OpenAI Chat Completions, Anthropic Messages, OpenAI
 * Responses). Each one parses its wire format into the one internal request every provider
 * adapter consumes — an OpenAI Chat Completions body — and renders the internal answer (an OpenAI
 * completion, or its chunks) back in its own format, errors included. The request path
 * (chat/inference-call.ts) knows none of them.
 */
export type Endpoint = 'chat.completions' | 'messages' | 'responses' | 'embeddings';

/** How an inbound API words its errors. */
export interface ErrorShape {
  /** The JSON body of an error answer (the status is the error's). */
  errorBody(err: GatewayError): string;
  /** The SSE text that ends a started stream with an error (no end-of-stream marker after it). */
  streamError(err: GatewayError): string;
}

export interface ParsedRequest {
  /** The internal request: an OpenAI Chat Completions body. */
  chat: ChatCompletionBody;
  /** The client's bytes when `chat` is the client's own body (forwarded as they are), else null. */
  raw: Buffer | null;
  model: string;
  stream: boolean;
  /** Whether the internal stream must end with the usage chunk (always, for protocols that report usage). */
  wantsUsage: boolean;
  /** The larger of max_completion_tokens and max_tokens when both are sent, else the one sent, else null. */
  maxTokens: number | null;
  /** The client's own request, for a provider that speaks this protocol natively (no translation). */
  native?: NativeRequest;
  /** The prompt's token estimate, made once by the request path for its reservation. */
  promptTokens?: number;
  /**
   * Why the body cannot be translated, when it went unrefused because its route is native (the
   * internal request then holds what could be read of it, for estimates and guardrails). A step
   * that would need the translation (guardrails rewriting it) refuses with this.
   */
  untranslatable?: GatewayError;
  /**
   * On a body only scanned because its route is native (nothing is translated that no step
   * needs): the translation, for the step that needs it after all (translateScanned).
   */
  translate?: () => ParsedRequest;
  /**
   * Fields of the client's body the translation into the internal request left out because they
   * only tune the answer (named in `x-gateway-dropped-params`); absent when none. A target sent
   * the body as it came loses none of them.
   */
  dropped?: string[];
}

/**
 * A scanned body's translation, made when a step needs it (a route that is not native after all,
 * guardrails that read or rewrite the internal request): the request becomes the translation, its
 * native form kept; a body the translation refuses keeps the scan and its refusal as
 * `untranslatable`, for the step to answer.
 */
export function translateScanned(parsed: ParsedRequest): void {
  const translate = parsed.translate;
  if (translate === undefined) return;
  parsed.translate = undefined;
  try {
    const native = parsed.native;
    Object.assign(parsed, translate());
    parsed.native = native;
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    parsed.untranslatable = err;
  }
}

/** Renders one streamed answer, chunk by chunk; one per request. */
export interface StreamWriter {
  /** Text to send first, before any chunk (may be empty). */
  start(): string;
  /** An internal chunk (OpenAI chunk JSON) → the text to send for it ('' to send nothing). */
  chunk(data: string): string;
  /** The text that ends a complete stream. */
  end(meta: StreamMeta): string;
  /**
   * The text that ends a started stream with an error, for protocols whose error event depends on
   * what was already sent (sequence numbers, the response so far); without it, `streamError`.
   */
  error?(err: GatewayError): string;
  /** The whole answer as its protocol's object, once `end` was called (a Response, for one to be kept); absent or null: none. */
  final?(): Record<string, unknown> | null;
}

export interface InboundProtocol extends ErrorShape {
  readonly endpoint: Endpoint;
  /** The protocol some provider speaks natively, when one does (a route of such providers is native). */
  readonly nativeProtocol?: NativeProtocol;
  /**
   * Validates the client's parsed body; throws INVALID_REQUEST (with `param`) on the first problem.
   * `nativeRoute(model)` says whether every provider of the model's route takes the body as it
   * came: then what the translation cannot carry is the provider's to judge, not refused here.
   */
  parse(body: unknown, raw: Buffer, nativeRoute?: (model: string) => boolean): ParsedRequest;
  /** The answer's body in this protocol (`model` is the id the client asked for); a native answer goes as it is. */
  render(result: CompletionResult, request: ParsedRequest): Buffer;
  /** `native`: the provider streams this protocol's own frames, forwarded as they are. */
  streamWriter(request: ParsedRequest, requestId: string, native: boolean): StreamWriter;
}
