import type { FinishReason } from '@gateway/shared';
import type { ChatCompletionBody } from './openai-chat.js';

/**
 * The internal request and answer: what the request path hands a provider adapter and what it
 * gets back, whichever inbound protocol the client spoke (protocols/ parse into it and render
 * from it). Neutral ground between the pipeline, the protocols and the providers;
 * providers/adapter.ts re-exports it beside the adapter interface.
 */
export interface ChatRequest {
  /** The validated client body (OpenAI Chat Completions). Adapters may read it; they must not mutate it. */
  body: Readonly<ChatCompletionBody>;
  /** The client's bytes, forwardable as they are when the adapter needs no change. */
  raw: Buffer;
  /** The model id the client sent. */
  model: string;
  /** The model name this provider is sent (the providers file's `upstream`; often the same). */
  upstreamModel: string;
  stream: boolean;
  /** The client asked for the usage chunk (stream_options.include_usage). */
  clientWantsUsage: boolean;
  /** The client's own request, when its protocol is one some provider speaks natively. */
  native?: NativeRequest;
  requestId: string;
  /** Trace context for the provider (traceparent, tracestate) when the request is traced. */
  traceHeaders?: Record<string, string>;
}

export interface Usage {
  /** Prompt tokens, cached ones included. */
  input: number;
  output: number;
  /** Prompt tokens the provider read from its prompt cache (0 when it reports none). */
  cached?: number;
  /** Prompt tokens the provider wrote to its prompt cache (part of `input`), when it reports them. */
  cacheWrite?: number;
}

/**
 * The client's own request, kept beside its translation when the inbound protocol is one a
 * provider speaks natively: an adapter of that protocol sends it as it came (model name mapped,
 * key swapped) and answers in it, marking the result `native`.
 */
export type NativeProtocol = 'anthropic-messages' | 'openai-responses';

export interface NativeRequest {
  protocol: NativeProtocol;
  body: Readonly<Record<string, unknown>>;
  /** The client's bytes, for an adapter that sends them unchanged when the model keeps its name. */
  raw?: Buffer;
  /**
   * The client's headers of the provider's own API (`anthropic-beta`, `anthropic-version`, …) and
   * its query string, set by the provider step: a native request carries them as it came.
   */
  headers?: readonly (readonly [string, string])[] | null;
  query?: string;
}

export interface CompletionResult {
  status: 200;
  /** Sent to the client exactly as the provider produced it (OpenAI wire format, or the native protocol's when `native`). */
  body: Buffer;
  /** The body is in the request's native protocol, not OpenAI's. */
  native?: boolean;
  usage: Usage;
  finishReason: FinishReason;
  /** The provider's own finish reason when it maps to none of the gateway's (kept for the record). */
  rawFinishReason?: string | null;
  /** A native Response's id, which the gateway remembers with the provider that made it. */
  responseId?: string;
}

/** What a stream knows so far; the adapter updates it as events pass. */
export interface StreamMeta {
  usage: Usage | null;
  /** Output tokens estimated from the content seen, for when the stream ends early. */
  estimatedOutput: number;
  finishReason: FinishReason | null;
  /** The provider's own finish reason when it maps to none of the gateway's. */
  rawFinishReason?: string | null;
  /** The provider sent an error event: the answer failed, whatever follows. */
  failed: boolean;
  /** A native Response stream's id, once its last event came (the gateway remembers it with its provider). */
  responseId?: string;
}

export interface StreamResult {
  meta: StreamMeta;
  /**
   * `data:` payloads in OpenAI chunk format, ready to frame; `[DONE]` is not included. When
   * `native`: whole SSE frames of the request's native protocol, to forward as they are.
   */
  events: AsyncIterable<string>;
  native?: boolean;
}

/**
 * An OpenAI embeddings body, validated (protocols/openai-embeddings/validate-embeddings.ts):
 * `input` is a non-empty string, or 1 to 2048 non-empty strings, or token ids (one array of
 * them, or 1 to 2048 non-empty arrays). Unknown fields are kept for adapters that forward the body.
 */
export type EmbeddingsInput = string | readonly string[] | readonly number[] | readonly (readonly number[])[];

export interface EmbeddingsBody {
  readonly model: string;
  readonly input: EmbeddingsInput;
  readonly encoding_format?: 'float' | 'base64' | null;
  readonly dimensions?: number | null;
  readonly user?: string | null;
  readonly [field: string]: unknown;
}

export interface EmbeddingsRequest {
  /** The validated client body. Adapters may read it; they must not mutate it. */
  body: EmbeddingsBody;
  /** The client's bytes, forwardable as they are when the adapter needs no change. */
  raw: Buffer;
  /** The model id the client sent (the answer's `model`). */
  model: string;
  /** The model name this provider is sent. */
  upstreamModel: string;
  requestId: string;
  /** Trace context for the provider (traceparent, tracestate) when the request is traced. */
  traceHeaders?: Record<string, string>;
}

export interface EmbeddingsResult {
  /**
   * OpenAI's embeddings answer: `{object: "list", data: [{object: "embedding", index, embedding}],
   * model: <the client's id>, usage: {prompt_tokens, total_tokens}}`, each embedding in the
   * encoding the client asked for (floats unless `encoding_format: "base64"`).
   */
  body: Buffer;
  /** Prompt tokens: the provider's count, or the gateway's estimate when it sends none. */
  usage: { input: number };
}

