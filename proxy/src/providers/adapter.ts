import type { ModelEntry, ProviderConfig, ProviderTypeInfo } from '@gateway/shared';
import type { ParamTable } from '../conversion/param-support.js';
import type { Cancel } from './cancel.js';
import type { ProviderBatches } from './provider-batches.js';
import type { UpstreamResponse } from './upstream-request.js';
import type { ChatRequest, CompletionResult, EmbeddingsRequest, EmbeddingsResult, NativeProtocol, StreamResult } from '../request/internal-request.js';

// The internal request's types live in request/; re-exported here so adapters import one module.
export type {
  ChatRequest,
  CompletionResult,
  EmbeddingsBody,
  EmbeddingsInput,
  EmbeddingsRequest,
  EmbeddingsResult,
  NativeProtocol,
  NativeRequest,
  StreamMeta,
  StreamResult,
  Usage,
} from '../request/internal-request.js';
export type * from '../request/openai-chat.js';

/**
 * The one interface between the proxy and a model provider. Everything provider-specific (wire
 * protocol, auth header, usage fields, error bodies) lives in the provider's folder behind it;
 * conformance.case.ts is the suite every adapter must pass.
 */
export interface ProviderAdapter {
  readonly name: string;
  readonly type: string;
  readonly models: readonly ModelEntry[];
  /**
   * Non-streaming completion. Rejects with a GatewayError (UPSTREAM_ERROR / UPSTREAM_TIMEOUT, or the
   * provider's own class: INVALID_REQUEST, RATE_LIMITED), or with UpstreamAborted once cancelled.
   */
  complete(request: ChatRequest, cancel: Cancel): Promise<CompletionResult>;
  /**
   * Streaming completion. Resolves once the provider accepted the request (status 200), so
   * errors before the first byte still become a normal error response. Iterating `events`
   * pulls from the provider: a consumer that waits applies backpressure upstream.
   */
  stream(request: ChatRequest, cancel: Cancel): Promise<StreamResult>;
  /**
   * Embeddings, for providers that have them (a route skips providers without). Rejects as
   * complete() does; a request the provider cannot take (token ids, `dimensions`) is refused with
   * INVALID_REQUEST naming the field, before anything is sent.
   */
  embed?(request: EmbeddingsRequest, cancel: Cancel): Promise<EmbeddingsResult>;
  /** Requests waiting for a connection to the provider (0 for adapters without a pool). */
  queueDepth?(): number;
  /**
   * Whether the provider is sent a request of this inbound protocol as it came (the native path)
   * for this model; absent: never. A route all of whose targets do is a native route: the gateway
   * reads only the fields it needs and leaves the rest to the provider.
   */
  speaksNatively?(protocol: NativeProtocol, entry: ModelEntry): boolean;
  /**
   * Which fields of the internal request the provider's translation carries, drops or refuses for
   * this model (conversion/param-support.ts), read once when routes are built; absent or null: the
   * provider speaks Chat Completions and is sent every field.
   */
  paramsFor?(entry: ModelEntry): ParamTable | null;
  /**
   * The provider's own batch API, when the entry says `batch: native`: batch lines routed here are
   * sent to it as one batch instead of one by one (provider-batches.ts); absent: the gateway runs them.
   */
  readonly batches?: ProviderBatches;
  /**
   * A request about a response the provider keeps in its own Responses API (GET or DELETE
   * `/responses/{id}`, or GET `/responses/{id}/input_items` when `items`), with the client's
   * query and provider headers; the answer comes whatever its status, to be passed on as it came.
   * Absent, or null for an entry that translates: the provider keeps none the gateway sent it.
   */
  storedResponse?(request: StoredResponseRequest, cancel: Cancel): Promise<ProviderAnswer> | null;
  close(): Promise<void>;
}

/** A GET or DELETE of a response the provider keeps (ProviderAdapter.storedResponse). */
export interface StoredResponseRequest {
  method: 'GET' | 'DELETE';
  id: string;
  /** The response's input items (`/input_items`) rather than the response. */
  items: boolean;
  /** The client's query string, as it came (`include[]`, `stream`, `after`, `limit`, `order`…). */
  query: string;
  /** The client's provider headers (server.ts decides which pass). */
  headers: readonly (readonly [string, string])[] | null;
}

/** A provider's answer passed on as it came: its status, a header, its body whole or chunk by chunk. */
export type ProviderAnswer = Pick<UpstreamResponse, 'status' | 'header' | 'body' | 'stream' | 'destroy'>;

export interface AdapterFactory extends ProviderTypeInfo {
  create(config: ProviderConfig): ProviderAdapter;
}
