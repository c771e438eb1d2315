import { getChunkedStream, EventStreamCodec } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { Errors, GatewayError, type ModelEntry, type ProviderConfig } from '@gateway/shared';
import type { AdapterFactory, ChatRequest, CompletionResult, EmbeddingsRequest, EmbeddingsResult, ProviderAdapter, StreamResult } from '../adapter.js';
import type { ParamTable } from '../../conversion/param-support.js';
import type { Cancel } from '../cancel.js';
import { ProviderConnection } from '../provider-connection.js';
import { newStreamMeta } from '../stream-inspector.js';
import { transportError } from '../upstream-error.js';
import type { UpstreamResponse } from '../upstream-request.js';
import { bedrockEmbed } from './bedrock-embeddings.js';
import { bedrockStatusError } from './bedrock-errors.js';
import { chatConverse } from '../../conversion/chat-converse/chat-converse.js';
import { BedrockSigner } from './bedrock-signer.js';
import { BedrockStreamTranslator } from '../../conversion/chat-converse/bedrock-stream.js';
import type { BedrockResponse } from './bedrock-wire.js';
import { BEDROCK_CLAUDE_PARAMS, BEDROCK_PARAMS, isClaudeModel } from './bedrock-params.js';
import type { ConverseSettings } from '../../conversion/chat-converse/bedrock-request.js';
import { batchMode, type ProviderBatches } from '../provider-batches.js';
import { BedrockBatches, type BedrockBatchSettings } from './bedrock-batches.js';
import { jsonBytes } from '../../request/json-bytes.js';

/**
 * Amazon Bedrock's Converse API behind the OpenAI interface: `POST /model/{modelId}/converse`
 * and `/converse-stream` (whose answer is the binary `application/vnd.amazon.eventstream`,
 * decoded by the Smithy event-stream codec). Each request carries either a SigV4 signature made
 * from the access key pair (bedrock-signer.ts) or a Bedrock API key as a bearer token (the same
 * header on every request, nothing computed). The model id may be a foundation model id or an
 * inference profile's id or ARN: it is URL-encoded into the path. Embeddings go through
 * InvokeModel (`/invoke`) in the embedding model family's own body (bedrock-embeddings.ts).
 */
const REGION = /^[a-z]{2}(-[a-z]+)+-\d+$/;

export class BedrockAdapter implements ProviderAdapter {
  readonly type = 'bedrock';
  readonly name: string;
  readonly models: readonly ModelEntry[];
  private readonly connection: ProviderConnection;
  /** A request's headers: signed for its path and body, or the API key's, the same every time. */
  private readonly authorize: (path: string, payload: Buffer) => Record<string, string>;
  private readonly prefix: string;
  private readonly codec = new EventStreamCodec(toUtf8, fromUtf8);
  /** Each configured model's encoded path segment, worked out once. */
  private readonly paths = new Map<string, string>();
  /** Each configured model's translation settings (whether it is Claude, which takes thinking), worked out once. */
  private readonly settings = new Map<string, ConverseSettings>();
  /** Bedrock's batch inference, with `batch: native`. */
  readonly batches?: ProviderBatches;

  constructor(config: ProviderConfig) {
    const settings = config.settings ?? {};
    const region = settings.region ?? '';
    if (!REGION.test(region)) throw new Error(`provider ${config.name}: "region" must be an AWS region such as us-east-1`);
    const base = new URL(config.base_url ?? bedrockBaseUrl(settings));
    this.name = config.name;
    this.models = config.models;
    this.prefix = `${base.pathname.replace(/\/+$/, '')}/model/`;
    this.authorize = authorization(config, base, region);
    // The authorization goes with each request; the pool itself sends no fixed headers.
    this.connection = new ProviderConnection(config, base.origin, {});
    for (const m of config.models) {
      this.paths.set(m.upstream, this.prefix + encodeURIComponent(m.upstream));
      this.settings.set(m.upstream, converseSettings(m.upstream));
    }
    if (batchMode(config.name, settings.batch) === 'native') this.batches = new BedrockBatches(config.name, batchSettings(config, region), this);
  }

  /** A request as a batch record's `modelInput`: the Converse body `complete` would send (bedrock-batches.ts). */
  batchBody(request: ChatRequest): Buffer {
    return jsonBytes(chatConverse.toRequest(request.body, this.settingsFor(request.upstreamModel)));
  }

  batchAnswer(request: ChatRequest, body: Buffer): CompletionResult {
    let response: BedrockResponse;
    try {
      response = JSON.parse(body.toString('utf8')) as BedrockResponse;
    } catch {
      throw Errors.providerNotJson(this.name);
    }
    if (response === null || typeof response !== 'object') throw Errors.providerSentNot(this.name, 'an object');
    return chatConverse.fromResponse(response, { provider: this.name, id: `chatcmpl-${request.requestId}`, model: request.model });
  }

  batchRefusal(status: number, body: Buffer): GatewayError {
    return bedrockStatusError(this.name, status, body.toString('utf8', 0, Math.min(body.length, 8192)), undefined, undefined);
  }

  async complete(request: ChatRequest, cancel: Cancel): Promise<CompletionResult> {
    const res = await this.send(request, 'converse', cancel);
    let body: Buffer;
    try {
      body = await res.body();
    } catch (err) {
      throw transportError(this.name, err, cancel.aborted);
    }
    return this.batchAnswer(request, body);
  }

  /**
   * Resolves once the first chunk is ready, so that an exception Bedrock sends in place of the
   * answer (throttled, say) fails over like the same error as a status.
   */
  async stream(request: ChatRequest, cancel: Cancel): Promise<StreamResult> {
    const res = await this.send(request, 'converse-stream', cancel);
    const meta = newStreamMeta();
    const translator = chatConverse.streamTranslator({ meta, id: `chatcmpl-${request.requestId}`, model: request.model, provider: this.name, clientWantsUsage: request.clientWantsUsage });
    const events = this.events(res, translator, cancel);
    const first = await events.next();
    return { meta, events: prepend(first, events) };
  }

  private async *events(res: UpstreamResponse, translator: BedrockStreamTranslator, cancel: Cancel): AsyncGenerator<string> {
    const out: string[] = [];
    let ended = false;
    try {
      for await (const whole of getChunkedStream(res.stream())) {
        let message;
        try {
          message = this.codec.decode(whole);
        } catch {
          throw Errors.providerCorruptEventStream(this.name);
        }
        const headers = message.headers;
        const messageType = String(headers[':message-type']?.value ?? 'event');
        const eventType = String((messageType === 'event' ? headers[':event-type'] : headers[':exception-type'] ?? headers[':error-code'])?.value ?? '');
        translator.push({ messageType, eventType, payload: toUtf8(message.body) }, out);
        for (let i = 0; i < out.length; i++) yield out[i] as string;
        out.length = 0;
        if (translator.finished) break;
      }
      ended = true;
    } catch (err) {
      res.destroy();
      if (err instanceof GatewayError) throw err;
      if (cancel.aborted) throw transportError(this.name, err, true);
      // The chunker's "Truncated event message" and the like: the stream broke, the answer is partial.
      if (err instanceof Error && !('code' in err)) throw Errors.providerCorruptEventStream(this.name);
      throw transportError(this.name, err, cancel.aborted);
    } finally {
      // The consumer left early (client gone, key revoked): stop the provider too.
      if (!ended) res.destroy();
    }
    translator.end(out);
    res.release();
    for (let i = 0; i < out.length; i++) yield out[i] as string;
  }

  /** Amazon Titan and Cohere embedding models through InvokeModel; any other model is refused 400. */
  embed(request: EmbeddingsRequest, cancel: Cancel): Promise<EmbeddingsResult> {
    const path = `${this.modelPath(request.upstreamModel)}/invoke`;
    return bedrockEmbed(this.name, request, cancel, (payload, c, traced) => this.post(path, payload, c, traced));
  }

  private send(request: ChatRequest, operation: 'converse' | 'converse-stream', cancel: Cancel): Promise<UpstreamResponse> {
    const payload = jsonBytes(chatConverse.toRequest(request.body, this.settingsFor(request.upstreamModel)));
    return this.post(`${this.modelPath(request.upstreamModel)}/${operation}`, payload, cancel, request);
  }

  /** A wildcard entry's model is known only per request; a listed one's was read at start-up. */
  private settingsFor(upstream: string): ConverseSettings {
    return this.settings.get(upstream) ?? converseSettings(upstream);
  }

  private modelPath(upstream: string): string {
    return this.paths.get(upstream) ?? this.prefix + encodeURIComponent(upstream);
  }

  private post(path: string, payload: Buffer, cancel: Cancel, traced: { traceHeaders?: Record<string, string> }): Promise<UpstreamResponse> {
    // An API key's headers are one object for every request; a traced request gets a copy.
    return this.connection.post(
      path,
      payload,
      cancel,
      traced,
      (status, text, res) => bedrockStatusError(this.name, status, text, res.header('x-amzn-errortype'), res.header('retry-after')),
      this.authorize(path, payload),
    );
  }

  queueDepth(): number {
    return this.connection.queueDepth();
  }

  paramsFor(entry: ModelEntry): ParamTable {
    return isClaudeModel(entry.upstream) ? BEDROCK_CLAUDE_PARAMS : BEDROCK_PARAMS;
  }

  async close(): Promise<void> {
    await Promise.all([this.connection.close(), this.batches?.close()]);
  }
}

/**
 * What batch inference needs besides the runtime's: an access key pair (S3 takes no Bedrock API
 * key), the service role and the bucket. The messages name the fields, never a value.
 */
function batchSettings(config: ProviderConfig, region: string): BedrockBatchSettings {
  const settings = config.settings ?? {};
  const accessKeyId = settings.aws_access_key_id;
  const secretAccessKey = settings.aws_secret_access_key;
  const sessionToken = settings.aws_session_token;
  if (accessKeyId === undefined || secretAccessKey === undefined) {
    throw new Error(`provider ${config.name}: "batch: native" needs "aws_access_key_id" and "aws_secret_access_key" (S3 takes no Bedrock API key)`);
  }
  const roleArn = settings.batch_role_arn;
  const s3Uri = settings.batch_s3_uri;
  if (roleArn === undefined || !/^arn:aws[a-z-]*:iam::\d{12}:role\/.+$/.test(roleArn)) throw new Error(`provider ${config.name}: "batch: native" needs "batch_role_arn", the ARN of the service role Bedrock runs batch jobs as`);
  if (s3Uri === undefined) throw new Error(`provider ${config.name}: "batch: native" needs "batch_s3_uri" (s3://bucket/prefix), where the jobs' input and output go`);
  const minRecords = settings.batch_min_records === undefined ? 100 : Number(settings.batch_min_records);
  if (!Number.isInteger(minRecords) || minRecords < 1) throw new Error(`provider ${config.name}: "batch_min_records" must be a whole number of at least 1`);
  return {
    region,
    credentials: sessionToken === undefined ? { accessKeyId, secretAccessKey } : { accessKeyId, secretAccessKey, sessionToken },
    roleArn,
    s3Uri,
    controlUrl: settings.batch_url ?? `https://bedrock.${region}.amazonaws.com`,
    s3Url: settings.s3_url ?? null,
    minRecords,
  };
}

/**
 * One of Bedrock's two kinds of credentials, never both: an API key (`api_key`, sent as
 * `Authorization: Bearer`, as AWS documents for the runtime API) or an access key pair with an
 * optional session token (SigV4). The messages name the fields, never a value.
 */
function authorization(config: ProviderConfig, base: URL, region: string): (path: string, payload: Buffer) => Record<string, string> {
  const settings = config.settings ?? {};
  const accessKeyId = settings.aws_access_key_id;
  const secretAccessKey = settings.aws_secret_access_key;
  const sessionToken = settings.aws_session_token;
  if (config.api_key !== null) {
    if (accessKeyId !== undefined || secretAccessKey !== undefined || sessionToken !== undefined) {
      throw new Error(`provider ${config.name}: give either "api_key" (a Bedrock API key) or "aws_access_key_id" and "aws_secret_access_key", not both`);
    }
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${config.api_key}` };
    return () => headers;
  }
  if (accessKeyId === undefined || secretAccessKey === undefined) {
    throw new Error(`provider ${config.name}: "aws_access_key_id" and "aws_secret_access_key" are required, or "api_key" (a Bedrock API key)`);
  }
  const signer = new BedrockSigner(base, region, sessionToken === undefined ? { accessKeyId, secretAccessKey } : { accessKeyId, secretAccessKey, sessionToken });
  // The headers signed with every request (a copy is signed, this one never changes).
  const headers: Readonly<Record<string, string>> = { 'content-type': 'application/json' };
  return (path, payload) => signer.sign(path, payload, headers);
}

function bedrockBaseUrl(settings: Readonly<Record<string, string>>): string {
  return `https://bedrock-runtime.${settings.region ?? ''}.amazonaws.com`;
}

async function* prepend(first: IteratorResult<string>, rest: AsyncGenerator<string>): AsyncGenerator<string> {
  if (first.done === true) return;
  yield first.value;
  yield* rest;
}

export const bedrockFactory: AdapterFactory = {
  type: 'bedrock',
  defaultBaseUrl: null,
  usesBaseUrl: true,
  // `batch: native` runs batches sent to its models as batch inference jobs, through S3.
  fields: {
    region: 'required',
    aws_access_key_id: 'optional',
    aws_secret_access_key: 'optional',
    aws_session_token: 'optional',
    batch: 'optional',
    batch_role_arn: 'optional',
    batch_s3_uri: 'optional',
    batch_min_records: 'optional',
    batch_url: 'optional',
    s3_url: 'optional',
  },
  defaultBaseUrlFor: bedrockBaseUrl,
  create: (config) => new BedrockAdapter(config),
};

/** The output room a Claude model's answer keeps when thinking is on and the client set no limit. */
const THINKING_ANSWER_ROOM = 4096;

function converseSettings(upstreamModel: string): ConverseSettings {
  return { extendedThinking: isClaudeModel(upstreamModel), defaultMaxTokens: THINKING_ANSWER_ROOM };
}
