import type { ModelEntry, ProviderConfig } from '@gateway/shared';
import { Errors } from '@gateway/shared';
import type { AdapterFactory, ChatRequest, CompletionResult, EmbeddingsRequest, EmbeddingsResult, NativeProtocol, ProviderAdapter, StreamResult } from '../adapter.js';
import type { ParamTable } from '../../conversion/param-support.js';
import { DEFAULT_MAX_TOKENS } from '../anthropic/anthropic-options.js';
import type { Cancel } from '../cancel.js';
import { ProviderConnection } from '../provider-connection.js';
import type { UpstreamResponse } from '../upstream-request.js';
import { VertexAnthropic } from './vertex-anthropic.js';
import { vertexEmbed } from './vertex-embeddings.js';
import { vertexStatusError } from './vertex-errors.js';
import { VertexGemini } from './vertex-gemini.js';
import { readServiceAccountKey, VertexTokenSource } from './vertex-token.js';
import { ANTHROPIC_PARAMS } from '../anthropic/anthropic-params.js';
import { GEMINI_PARAMS } from '../gemini/gemini-params.js';
import type { GatewayError } from '@gateway/shared';
import { batchMode, type ProviderBatches } from '../provider-batches.js';
import { VertexBatches } from './vertex-batches.js';

/**
 * Google Vertex AI behind the OpenAI interface: Gemini models through `generateContent` /
 * `streamGenerateContent` (vertex-gemini.ts) and Claude models through `rawPredict` /
 * `streamRawPredict` (vertex-anthropic.ts), and Google's embedding models through `predict`
 * (vertex-embeddings.ts), at
 * `{base_url}/v1/projects/{project}/locations/{location}/publishers/{google|anthropic}/models/{model}`.
 * A model whose upstream name starts with `claude` is Anthropic's, any other Google's, unless the
 * name says so in full (`publishers/anthropic/models/{model}`). Each
 * request carries the service account's current access token (vertex-token.ts).
 */
const SEGMENT = /^[a-z0-9][a-z0-9-]{0,62}$/;
const KNOWN_OPTIONS = ['default_max_tokens'];

type Publisher = 'google' | 'anthropic';
interface Route {
  path: string;
  publisher: Publisher;
  /** The model's name at its publisher. */
  name: string;
}
/** What a request carries that the provider may be sent beside it (trace context). */
type Traced = { traceHeaders?: Record<string, string>; native?: ChatRequest['native'] };

export class VertexAdapter implements ProviderAdapter {
  readonly type = 'vertex';
  readonly name: string;
  readonly models: readonly ModelEntry[];
  private readonly connection: ProviderConnection;
  private readonly tokens: VertexTokenSource;
  private readonly prefix: string;
  private readonly gemini: VertexGemini;
  private readonly anthropic: VertexAnthropic;
  /** Each configured model's path and publisher, worked out once. */
  private readonly routes = new Map<string, Route>();
  private readonly fixedHeaders: Readonly<Record<string, string>> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  private tokenHeaders: { token: string; headers: Record<string, string> } = { token: '', headers: {} };
  /** Vertex AI's batch prediction, with `batch: native`. */
  readonly batches?: ProviderBatches;

  constructor(config: ProviderConfig) {
    const settings = config.settings ?? {};
    const project = settings.project ?? '';
    const location = settings.location ?? '';
    if (!/^[a-z][a-z0-9-]{4,61}[a-z0-9]$/.test(project)) throw new Error(`provider ${config.name}: "project" must be a Google Cloud project id`);
    if (!SEGMENT.test(location)) throw new Error(`provider ${config.name}: "location" must be a Vertex AI location such as us-central1, europe-west4 or global`);
    for (const option of Object.keys(config.options)) {
      if (!KNOWN_OPTIONS.includes(option)) throw new Error(`provider ${config.name}: unknown option options.${option} (known: ${KNOWN_OPTIONS.join(', ')})`);
    }
    const maxTokens = config.options.default_max_tokens ?? DEFAULT_MAX_TOKENS;
    if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens <= 0) throw new Error(`provider ${config.name}: option "default_max_tokens" must be a positive integer`);
    const key = readServiceAccountKey(config.name, settings.credentials_file ?? '');
    this.name = config.name;
    this.models = config.models;
    const base = new URL(config.base_url ?? vertexBaseUrl(settings));
    this.prefix = `${base.pathname.replace(/\/+$/, '')}/v1/projects/${project}/locations/${location}/publishers/`;
    this.connection = new ProviderConnection(config, base.origin, this.fixedHeaders);
    this.tokens = new VertexTokenSource(config.name, key);
    this.gemini = new VertexGemini(config.name, (path, payload, cancel, request) => this.send(path, 'google', payload, cancel, request));
    this.anthropic = new VertexAnthropic(config.name, (path, payload, cancel, request) => this.send(path, 'anthropic', payload, cancel, request), maxTokens);
    for (const m of config.models) this.routes.set(m.upstream, this.route(m.upstream));
    if (batchMode(config.name, settings.batch) === 'native') {
      const gcsUri = settings.batch_gcs_uri;
      if (gcsUri === undefined) throw new Error(`provider ${config.name}: "batch: native" needs "batch_gcs_uri" (gs://bucket/prefix), where the jobs' input and output go`);
      this.batches = new VertexBatches(
        config.name,
        {
          apiUrl: base.href,
          parent: `projects/${project}/locations/${location}`,
          gcsUri,
          storageUrl: settings.storage_url ?? 'https://storage.googleapis.com',
          authorize: async () => ({ authorization: `Bearer ${await this.tokens.current()}` }),
        },
        this,
      );
    }
  }

  /** A request as a batch prediction's line: its model's resource and the body its online method would be sent (vertex-batches.ts). */
  batchLine(request: ChatRequest): { operation: string; body: Buffer } {
    const { publisher, name } = this.routes.get(request.upstreamModel) ?? this.route(request.upstreamModel);
    const body = publisher === 'anthropic' ? this.anthropic.payload(request) : this.gemini.payload(request);
    return { operation: `publishers/${publisher}/models/${name}`, body };
  }

  batchAnswer(request: ChatRequest, body: Buffer): CompletionResult {
    const { publisher } = this.routes.get(request.upstreamModel) ?? this.route(request.upstreamModel);
    return publisher === 'anthropic' ? this.anthropic.answer(request, body) : this.gemini.answer(request, body);
  }

  /** A failed prediction, in Google's error shape (vertex-batches.ts makes it so whatever the publisher). */
  batchRefusal(status: number, body: Buffer): GatewayError {
    return vertexStatusError(this.name, 'google', status, body.toString('utf8', 0, Math.min(body.length, 8192)), undefined);
  }

  complete(request: ChatRequest, cancel: Cancel): Promise<CompletionResult> {
    const { path, publisher } = this.routes.get(request.upstreamModel) ?? this.route(request.upstreamModel);
    return publisher === 'anthropic' ? this.anthropic.complete(path, request, cancel) : this.gemini.complete(path, request, cancel);
  }

  stream(request: ChatRequest, cancel: Cancel): Promise<StreamResult> {
    const { path, publisher } = this.routes.get(request.upstreamModel) ?? this.route(request.upstreamModel);
    return publisher === 'anthropic' ? this.anthropic.stream(path, request, cancel) : this.gemini.stream(path, request, cancel);
  }

  /** Claude models take Anthropic's Messages body as it came (vertex-anthropic.ts). */
  paramsFor(entry: ModelEntry): ParamTable {
    return (this.routes.get(entry.upstream) ?? this.route(entry.upstream)).publisher === 'anthropic' ? ANTHROPIC_PARAMS : GEMINI_PARAMS;
  }

  speaksNatively(protocol: NativeProtocol, entry: ModelEntry): boolean {
    return protocol === 'anthropic-messages' && (this.routes.get(entry.upstream) ?? this.route(entry.upstream)).publisher === 'anthropic';
  }

  /** Embeddings of Google's embedding models; Claude models have none (refused 400, naming the model). */
  embed(request: EmbeddingsRequest, cancel: Cancel): Promise<EmbeddingsResult> {
    const { path, publisher, name } = this.routes.get(request.upstreamModel) ?? this.route(request.upstreamModel);
    if (publisher === 'anthropic') return Promise.reject(Errors.invalidField('model', `The model \`${request.model}\` is a Claude model on Vertex AI, which has no embeddings.`));
    return vertexEmbed(this.name, path, name, request, cancel, (p, payload, c, r) => this.send(p, 'google', payload, c, r));
  }

  private route(upstream: string): Route {
    const explicit = /^publishers\/(google|anthropic)\/models\/(.+)$/.exec(upstream);
    const publisher: Publisher = explicit !== null ? (explicit[1] as Publisher) : upstream.startsWith('claude') ? 'anthropic' : 'google';
    const name = explicit !== null ? (explicit[2] as string) : upstream.startsWith('models/') ? upstream.slice(7) : upstream;
    return { path: `${this.prefix}${publisher}/models/${encodeURIComponent(name)}`, publisher, name };
  }

  /** No extra promise in between while the token is at hand (nearly always: it is refreshed ahead of expiry). */
  private send(path: string, publisher: Publisher, payload: Buffer, cancel: Cancel, request: Traced): Promise<UpstreamResponse> {
    const current = this.tokens.current();
    if (typeof current === 'string') return this.sendWith(current, path, publisher, payload, cancel, request);
    return current.then((token) => this.sendWith(token, path, publisher, payload, cancel, request));
  }

  private sendWith(token: string, path: string, publisher: Publisher, payload: Buffer, cancel: Cancel, request: Traced): Promise<UpstreamResponse> {
    // The header set is made once per token, not per request; a traced request gets a copy.
    if (this.tokenHeaders.token !== token) this.tokenHeaders = { token, headers: { ...this.fixedHeaders, authorization: `Bearer ${token}` } };
    let headers = this.tokenHeaders.headers;
    // A native Claude request takes the client's betas with it (Vertex reads anthropic-beta; the
    // version is the body's anthropic_version, and the query string is Vertex's own).
    const betas = request.native?.headers?.find(([name]) => name === 'anthropic-beta');
    if (publisher === 'anthropic' && betas !== undefined) headers = { ...headers, 'anthropic-beta': betas[1] };
    return this.connection.post(path, payload, cancel, request, (status, text, res) => {
      if (status === 401) this.tokens.refused(token);
      return vertexStatusError(this.name, publisher, status, text, res.header('retry-after'));
    }, headers);
  }

  queueDepth(): number {
    return this.connection.queueDepth();
  }

  async close(): Promise<void> {
    this.tokens.close();
    await Promise.all([this.connection.close(), this.batches?.close()]);
  }
}

/** Vertex AI's regional endpoint, or the global one for `location: global`. */
function vertexBaseUrl(settings: Readonly<Record<string, string>>): string {
  const location = settings.location ?? '';
  return location === 'global' ? 'https://aiplatform.googleapis.com' : `https://${location}-aiplatform.googleapis.com`;
}

export const vertexFactory: AdapterFactory = {
  type: 'vertex',
  defaultBaseUrl: null,
  usesBaseUrl: true,
  // `batch: native` runs batches sent to its models as batch prediction jobs, through Cloud Storage.
  fields: { project: 'required', location: 'required', credentials_file: 'required', batch: 'optional', batch_gcs_uri: 'optional', storage_url: 'optional' },
  defaultBaseUrlFor: vertexBaseUrl,
  create: (config) => new VertexAdapter(config),
};
