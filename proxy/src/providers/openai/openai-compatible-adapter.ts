import { Errors, GatewayError, type ModelEntry, type ProviderConfig } from '@gateway/shared';
import type { ChatRequest, NativeRequest, CompletionResult, EmbeddingsRequest, EmbeddingsResult, NativeProtocol, ProviderAdapter, ProviderAnswer, StoredResponseRequest, StreamMeta, StreamResult } from '../adapter.js';
import type { Cancel } from '../cancel.js';
import { readOpenAiEmbeddings } from './embeddings-read.js';
import { inspectChunk, newStreamMeta } from '../stream-inspector.js';
import { providerStatusError, streamErrorEvent, transportError } from '../upstream-error.js';
import type { UpstreamResponse } from '../upstream-request.js';
import { scanCompletion } from './completion-scan.js';
import { nativeResponse, nativeResponseEvents } from './responses-native.js';
import { mapFinishReason } from './finish-reason.js';
import { limitNeedsMove, moveLimit, tokenLimitField, tokenLimitOption, type TokenLimitField } from './token-limit-field.js';
import { ProviderConnection } from '../provider-connection.js';
import { spliceModel } from '../../request/model-splice.js';
import { readSse } from '../sse-reader.js';
import { jsonBytes } from '../../request/json-bytes.js';

/** The headers of a provider's answer, as an adapter's error mapping reads them. */
export interface AnswerHeaders {
  header(name: string): string | undefined;
}

const NO_HEADERS: AnswerHeaders = { header: () => undefined };

/** What differs between providers speaking OpenAI's Chat Completions wire format. */
export interface OpenAiEndpoint {
  /** Scheme, host and port: one keep-alive pool per provider. */
  origin: string;
  /** Headers sent with every request, the provider's credential among them. */
  headers: Record<string, string>;
}

/** The operations of OpenAI's API the adapter calls, named as the last part of their path. */
export type OpenAiOperation = 'chat/completions' | 'embeddings';

/**
 * A stream's chunks as the provider sent them, rewritten before the gateway reads them: returns the
 * chunk to use, or null to hold it back. One per stream, so it may keep state.
 */
export type ChunkRewrite = (data: string) => string | null;

/**
 * The transport and translation of OpenAI's Chat Completions wire format, shared by every provider
 * that speaks it (OpenAI and compatible servers, Azure OpenAI). Requests go over a keep-alive
 * undici Pool per provider; the client's body is forwarded as it came, except that the upstream
 * model is named, the token limit is put in the field the model takes (token-limit-field.ts), and
 * a stream always asks for the usage chunk so that streamed requests are billed with the
 * provider's own token counts. Subclasses give the request path, the headers, and their
 * provider's own error and stream quirks.
 */
export abstract class OpenAiCompatibleAdapter implements ProviderAdapter {
  abstract readonly type: string;
  readonly name: string;
  readonly models: readonly ModelEntry[];
  private readonly connection: ProviderConnection;
  private readonly headers: Record<string, string>;
  private readonly limitOption: TokenLimitField | null;
  /** The token-limit field of each configured model, decided once at start (token-limit-field.ts). */
  private readonly limitFields: ReadonlyMap<string, TokenLimitField | null>;

  constructor(config: ProviderConfig, endpoint: OpenAiEndpoint) {
    this.name = config.name;
    this.models = config.models;
    this.limitOption = tokenLimitOption(config.name, config.options);
    this.limitFields = new Map(config.models.map((m) => [m.upstream, tokenLimitField(m.upstream, this.limitOption)]));
    const origin = endpoint.origin;
    this.headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...endpoint.headers };
    this.connection = new ProviderConnection(config, origin, this.headers);
  }

  /** The request path (with its query) of an operation for a model. */
  protected abstract path(upstreamModel: string, operation: OpenAiOperation): string;

  /** A refusal of an embeddings request this provider cannot take (before anything is sent); none by default. */
  protected embeddingsRefusal(_request: EmbeddingsRequest): GatewayError | null {
    return null;
  }

  /** A non-200 answer as the gateway error of the same class (`res`: where its headers are read). */
  protected statusError(status: number, bodyText: string, res: AnswerHeaders): GatewayError {
    return providerStatusError(this.name, status, bodyText, res.header('retry-after'));
  }

  /**
   * The path of the provider's own Responses API when the entry asks for it (`responses: native`):
   * then a /v1/responses request goes there as it came; null (the default): it is translated.
   */
  protected responsesPath(): string | null {
    return null;
  }

  speaksNatively(protocol: NativeProtocol): boolean {
    return protocol === 'openai-responses' && this.responsesPath() !== null;
  }

  /** The client's Responses body for the provider's own Responses API, or null when this request is translated. */
  private nativeResponses(request: ChatRequest): { path: string; payload: Buffer; headers: NativeRequest['headers'] } | null {
    const native = request.native;
    const path = native?.protocol === 'openai-responses' ? this.responsesPath() : null;
    if (path === null || native === undefined) return null;
    // A limit the project's cap gave a request that set none (caps.ts) goes with it.
    const capped = typeof request.body.max_tokens === 'number' && (native.body.max_output_tokens === undefined || native.body.max_output_tokens === null) ? request.body.max_tokens : null;
    // The client's bytes with the provider's model id in place; re-serialised only to add that limit (or when the id cannot be found in the bytes).
    const spliced = native.raw === undefined || capped !== null || typeof native.body.model !== 'string' ? null : spliceModel(native.raw, native.body.model, request.upstreamModel);
    const payload =
      spliced !== null
        ? spliced
        : jsonBytes({ ...native.body, model: request.upstreamModel, ...(capped === null ? {} : { max_output_tokens: capped }) });
    // The client's headers go with it (openai-beta, Codex's session and turn headers, its SDK's).
    return { path, payload, headers: native.headers };
  }

  /**
   * The provider's own copy of a response it made (`responses: native`): GET or DELETE
   * `{base_url}/responses/{id}`, GET `…/input_items`, with the client's query after the base URL's.
   */
  storedResponse(request: StoredResponseRequest, cancel: Cancel): Promise<ProviderAnswer> | null {
    const base = this.responsesPath();
    if (base === null) return null;
    const at = base.indexOf('?');
    const path = `${at === -1 ? base : base.slice(0, at)}/${encodeURIComponent(request.id)}${request.items ? '/input_items' : ''}`;
    const query = [at === -1 ? '' : base.slice(at + 1), request.query].filter((part) => part !== '').join('&');
    return this.connection.forward(request.method, query === '' ? path : `${path}?${query}`, cancel, this.withClientHeaders(request.headers));
  }

  /** A rewrite of the stream's chunks for the provider's departures from OpenAI's shape; none by default. */
  protected chunkRewrite(): ChunkRewrite | null {
    return null;
  }

  async complete(request: ChatRequest, cancel: Cancel): Promise<CompletionResult> {
    const responses = this.nativeResponses(request);
    if (responses !== null) {
      const res = await this.send(responses.path, responses.payload, cancel, request, responses.headers);
      let body: Buffer;
      try {
        body = await res.body();
      } catch (err) {
        throw transportError(this.name, err, cancel.aborted);
      }
      return nativeResponse(this.name, body);
    }
    const res = await this.send(this.path(request.upstreamModel, 'chat/completions'), this.payload(request), cancel, request);
    let body: Buffer;
    try {
      body = await res.body();
    } catch (err) {
      throw transportError(this.name, err, cancel.aborted);
    }
    return this.completion(body);
  }

  private completion(body: Buffer): CompletionResult {
    const facts = scanCompletion(body);
    if (facts === null) throw Errors.providerNotJson(this.name);
    return {
      status: 200,
      body,
      usage: { input: facts.input, output: facts.output, cached: facts.cached },
      ...mapFinishReason(facts.finishReason),
    };
  }

  /** A request as one line of OpenAI's Batch API: the operation and the body `complete` would send (openai-batches.ts). */
  batchLine(request: ChatRequest): { operation: string; body: Buffer } {
    const responses = this.nativeResponses(request);
    if (responses !== null) return { operation: '/v1/responses', body: responses.payload };
    return { operation: '/v1/chat/completions', body: this.payload(request) };
  }

  /** A batch line's 2xx answer, read as `complete` reads the provider's. */
  batchAnswer(request: ChatRequest, body: Buffer): CompletionResult {
    return this.nativeResponses(request) !== null ? nativeResponse(this.name, body) : this.completion(body);
  }

  /** A batch line answered otherwise than 2xx, as the same answer over HTTP would be refused (its headers are not kept). */
  batchRefusal(status: number, body: Buffer): GatewayError {
    return this.statusError(status, body.toString('utf8', 0, Math.min(body.length, 8192)), NO_HEADERS);
  }

  async stream(request: ChatRequest, cancel: Cancel): Promise<StreamResult> {
    const responses = this.nativeResponses(request);
    if (responses !== null) {
      const res = await this.send(responses.path, responses.payload, cancel, request, responses.headers);
      const meta = newStreamMeta();
      return { meta, events: nativeResponseEvents(res, this.name, meta, cancel), native: true };
    }
    const res = await this.send(this.path(request.upstreamModel, 'chat/completions'), this.payload(request), cancel, request);
    const meta = newStreamMeta();
    return { meta, events: this.events(res, meta, request.clientWantsUsage, cancel, this.chunkRewrite()) };
  }

  /** The provider's chunks, inspected for usage and the finish reason, up to [DONE] (sse-reader.ts). */
  private events(res: UpstreamResponse, meta: StreamMeta, clientWantsUsage: boolean, cancel: Cancel, rewrite: ChunkRewrite | null): AsyncGenerator<string> {
    const provider = this.name;
    return readSse(res, provider, cancel, {
      event(event, out) {
        let data: string | null = event.data;
        if (data === '[DONE]') return true;
        if (rewrite !== null) {
          data = rewrite(data);
          if (data === null) return false;
        }
        const forward = inspectChunk(data, meta, clientWantsUsage);
        // An error event is the provider's word that the answer failed: the client gets the
        // gateway's one error event (scrubbed), and the request is recorded as an error.
        if (meta.failed) throw streamErrorEvent(provider, data);
        if (forward !== null) out.push(forward);
        return false;
      },
      end() {
        if (meta.finishReason === null) throw Errors.providerStreamIncomplete(provider);
      },
    });
  }

  /**
   * The client's bytes when they can go as they are; re-serialised only to name the provider's
   * own model, to move the token limit to the field the model takes, or to ask for the usage
   * chunk a stream is billed from.
   */
  private payload(request: ChatRequest): Buffer {
    const renamed = request.upstreamModel !== request.model;
    const askUsage = request.stream && !request.clientWantsUsage;
    const known = this.limitFields.get(request.upstreamModel);
    const limitField = known !== undefined ? known : tokenLimitField(request.upstreamModel, this.limitOption);
    const moveTokens = limitNeedsMove(request.body, limitField);
    if (!renamed && !askUsage && !moveTokens) return request.raw;
    // Only the model renamed: the client's bytes with the provider's id in place.
    const spliced = askUsage || moveTokens ? null : spliceModel(request.raw, request.model, request.upstreamModel);
    if (spliced !== null) return spliced;
    const body: Record<string, unknown> = { ...request.body, model: request.upstreamModel };
    if (moveTokens) moveLimit(body, limitField as TokenLimitField);
    if (askUsage) body.stream_options = Object.assign({}, request.body.stream_options as object | undefined, { include_usage: true });
    return jsonBytes(body);
  }

  /**
   * OpenAI's `/embeddings`: the client's body goes as it came (re-serialised only to name the
   * provider's model), `encoding_format` and `dimensions` included; the answer is rebuilt with the
   * client's model id, and floats are encoded when base64 was asked and the server (an
   * OpenAI-compatible one) ignored it (embeddings-read.ts).
   */
  async embed(request: EmbeddingsRequest, cancel: Cancel): Promise<EmbeddingsResult> {
    const refused = this.embeddingsRefusal(request);
    if (refused !== null) throw refused;
    const payload = spliceModel(request.raw, request.model, request.upstreamModel) ?? jsonBytes({ ...request.body, model: request.upstreamModel });
    const res = await this.send(this.path(request.upstreamModel, 'embeddings'), payload, cancel, request);
    let body: Buffer;
    try {
      body = await res.body();
    } catch (err) {
      throw transportError(this.name, err, cancel.aborted);
    }
    return readOpenAiEmbeddings(this.name, body, request);
  }

  queueDepth(): number {
    return this.connection.queueDepth();
  }

  /** `beta`: the client's `openai-beta` header, which a native Responses request carries. */
  private send(path: string, payload: Buffer, cancel: Cancel, request: { traceHeaders?: Record<string, string> } | null, client: NativeRequest['headers'] = null): Promise<UpstreamResponse> {
    return this.connection.post(path, payload, cancel, request, (status, text, res) => this.statusError(status, text, res), this.withClientHeaders(client));
  }

  /** The fixed headers, with the client's provider headers over them when a native request carries some. */
  private withClientHeaders(client: NativeRequest['headers']): Record<string, string> {
    if (client === null || client === undefined || client.length === 0) return this.headers;
    const headers = { ...this.headers };
    for (const [name, value] of client) headers[name] = value;
    return headers;
  }

  async close(): Promise<void> {
    await this.connection.close();
  }
}
