import { Errors, sseData, type GatewayError, type ModelEntry, type ProviderConfig } from '@gateway/shared';
import type { AdapterFactory, ChatRequest, CompletionResult, NativeProtocol, ProviderAdapter, StreamMeta, StreamResult } from '../adapter.js';
import type { ParamTable } from '../../conversion/param-support.js';
import type { Cancel } from '../cancel.js';
import { newStreamMeta } from '../stream-inspector.js';
import { transportError } from '../upstream-error.js';
import type { UpstreamResponse } from '../upstream-request.js';
import { anthropicStatusError, anthropicStreamError } from './anthropic-errors.js';
import { parseAnthropicOptions } from './anthropic-options.js';
import { spliceModel } from '../../request/model-splice.js';
import { chatAnthropic } from '../../conversion/chat-anthropic/chat-anthropic.js';
import { StreamTranslator } from '../../conversion/chat-anthropic/anthropic-stream.js';
import type { AnthropicResponse } from './anthropic-types.js';
import { ProviderConnection } from '../provider-connection.js';
import { readSse } from '../sse-reader.js';
import { mapStopReason, usageFrom } from '../../conversion/anthropic-openai.js';
import { NativeStreamMeter } from './native-stream-meter.js';
import { ANTHROPIC_PARAMS } from './anthropic-params.js';
import { AnthropicBatches } from './anthropic-batches.js';
import { batchMode, type ProviderBatches } from '../provider-batches.js';
import { jsonBytes } from '../../request/json-bytes.js';

/**
 * Anthropic's Messages API behind the OpenAI Chat Completions interface: each request is
 * translated (anthropic-request.ts), sent to `{base_url}/v1/messages` over a keep-alive undici
 * Pool, and the answer translated back (anthropic-response.ts, anthropic-stream.ts).
 *
 * The API version is pinned: a newer one may change the wire format under the translation.
 */
export const ANTHROPIC_VERSION = '2023-06-01';

export class AnthropicAdapter implements ProviderAdapter {
  readonly type = 'anthropic';
  readonly name: string;
  readonly models: readonly ModelEntry[];
  private readonly connection: ProviderConnection;
  private readonly path: string;
  private readonly headers: Record<string, string>;
  private readonly defaultMaxTokens: number;
  /** Anthropic's own Message Batches, with `batch: native`. */
  readonly batches?: ProviderBatches;

  constructor(config: ProviderConfig) {
    if (config.base_url === null) throw new Error(`provider ${config.name}: base_url is required`);
    this.name = config.name;
    this.models = config.models;
    this.defaultMaxTokens = parseAnthropicOptions(config).defaultMaxTokens;
    const url = new URL(`${config.base_url}/v1/messages`);
    this.path = url.pathname + url.search;
    const origin = url.origin;
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'anthropic-version': ANTHROPIC_VERSION };
    if (config.api_key !== null) headers['x-api-key'] = config.api_key;
    this.headers = headers;
    this.connection = new ProviderConnection(config, origin, headers);
    if (batchMode(config.name, config.settings?.batch) === 'native') this.batches = new AnthropicBatches(config.name, config.base_url, headers, this);
  }

  async complete(request: ChatRequest, cancel: Cancel): Promise<CompletionResult> {
    const res = await this.send(this.payload(request), cancel, request);
    let body: Buffer;
    try {
      body = await res.body();
    } catch (err) {
      throw transportError(this.name, err, cancel.aborted);
    }
    return this.answerOf(request, body);
  }

  /** The provider's answer (a message) as the result of the request: Anthropic's own for a native one, else translated. */
  private answerOf(request: ChatRequest, body: Buffer): CompletionResult {
    let message: unknown = null;
    try {
      message = JSON.parse(body.toString('utf8'));
    } catch {
      // Not JSON: refused below with the other shapes that are no message.
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message)) {
      throw Errors.providerSentNot(this.name, 'a JSON message');
    }
    if (isNative(request)) {
      // An Anthropic client gets Anthropic's own answer: only its counts and stop reason are read.
      const answer = message as AnthropicResponse;
      const finish = mapStopReason(answer.stop_reason);
      return { status: 200, body, native: true, usage: usageFrom(answer.usage), finishReason: finish.gateway, rawFinishReason: finish.raw };
    }
    return chatAnthropic.fromResponse(message as AnthropicResponse, { fallbackModel: request.upstreamModel });
  }

  /**
   * Resolves once the first chunk (the role chunk, from message_start) is ready, so an error event
   * Anthropic sends instead of starting the message (overloaded, say) still fails over like the
   * same error as a status would.
   */
  async stream(request: ChatRequest, cancel: Cancel): Promise<StreamResult> {
    const res = await this.send(this.payload(request), cancel, request);
    const meta = newStreamMeta();
    const native = isNative(request);
    const events = native ? this.nativeEvents(res, new NativeStreamMeter(meta), meta, cancel) : this.events(res, chatAnthropic.streamTranslator({ provider: this.name, meta, clientWantsUsage: request.clientWantsUsage, requestId: request.requestId, fallbackModel: request.upstreamModel }), meta, cancel);
    const first = await events.next();
    return { meta, events: first.done ? events : startingWith(first.value, events), native };
  }

  /** The provider's events translated into OpenAI chunks (sse-reader.ts reads them). */
  private events(res: UpstreamResponse, translator: StreamTranslator, meta: StreamMeta, cancel: Cancel): AsyncGenerator<string> {
    const provider = this.name;
    let started = false;
    return readSse(res, provider, cancel, {
      event(event, out) {
        translator.push(event.data, out);
        if (meta.failed) throw anthropicStreamError(provider, event.data, started);
        if (out.length > 0) started = true;
        // The message is whole at message_stop: the client's answer ends now.
        return translator.finished;
      },
      end: (out) => translator.end(out),
    });
  }

  /** An Anthropic client's stream: the frames as Anthropic sent them, metered, never translated. */
  private nativeEvents(res: UpstreamResponse, meter: NativeStreamMeter, meta: StreamMeta, cancel: Cancel): AsyncGenerator<string> {
    const provider = this.name;
    let started = false;
    return readSse(res, provider, cancel, {
      event(event, out) {
        meter.read(event.event, event.data);
        if (meta.failed) throw anthropicStreamError(provider, event.data, started);
        out.push(event.event === undefined ? sseData(event.data) : `event: ${event.event}\n${sseData(event.data)}`);
        started = true;
        return meter.finished;
      },
      end: () => incomplete(provider),
    });
  }

  /** A request as the `params` of a Message Batches request: what `complete` would send (anthropic-batches.ts). */
  batchBody(request: ChatRequest): Buffer {
    return this.payload(request);
  }

  batchAnswer(request: ChatRequest, body: Buffer): CompletionResult {
    return this.answerOf(request, body);
  }

  batchRefusal(status: number, body: Buffer): GatewayError {
    return anthropicStatusError(this.name, status, body.toString('utf8', 0, Math.min(body.length, 8192)), undefined);
  }

  private payload(request: ChatRequest): Buffer {
    const native = request.native;
    if (native !== undefined && isNative(request)) {
      // The client's bytes with the provider's model id in place: nothing parsed or serialised again.
      const spliced = native.raw === undefined || typeof native.body.model !== 'string' ? null : spliceModel(native.raw, native.body.model, request.upstreamModel);
      return spliced ?? jsonBytes({ ...native.body, model: request.upstreamModel });
    }
    const body = chatAnthropic.toRequest(request.body, { upstreamModel: request.upstreamModel, stream: request.stream, defaultMaxTokens: this.defaultMaxTokens });
    return jsonBytes(body);
  }

  queueDepth(): number {
    return this.connection.queueDepth();
  }

  paramsFor(): ParamTable {
    return ANTHROPIC_PARAMS;
  }

  speaksNatively(protocol: NativeProtocol): boolean {
    return protocol === 'anthropic-messages';
  }

  /**
   * A native request goes with the client's query string and headers (its `anthropic-*` betas and
   * API version, its SDK's and agent's own): the features the client asked Anthropic for reach
   * Anthropic. A translated one is written for the pinned version and sent with it.
   */
  private send(payload: Buffer, cancel: Cancel, request: ChatRequest): Promise<UpstreamResponse> {
    const native = request.native;
    const path = native?.query ? `${this.path}${this.path.includes('?') ? '&' : '?'}${native.query}` : this.path;
    let headers = this.headers;
    if (native?.headers) {
      headers = { ...headers };
      for (const [name, value] of native.headers) headers[name] = value;
    }
    return this.connection.post(path, payload, cancel, request, (status, text, res) => anthropicStatusError(this.name, status, text, res.header('retry-after')), headers);
  }

  async close(): Promise<void> {
    await Promise.all([this.connection.close(), this.batches?.close()]);
  }
}

/** The client spoke Anthropic's Messages API: its request goes as it came. */
function isNative(request: ChatRequest): boolean {
  return request.native?.protocol === 'anthropic-messages';
}

/**
 * `rest` with `first` (already pulled from it) in front, without another generator in between;
 * leaving early still reaches `rest`, whose cleanup stops the provider.
 */
function startingWith(first: string, rest: AsyncGenerator<string>): AsyncIterable<string> {
  let pending: string | null = first;
  const iterator: AsyncIterator<string> = {
    next: () => {
      if (pending === null) return rest.next();
      const value = pending;
      pending = null;
      return Promise.resolve({ done: false, value });
    },
    return: (value?: unknown) => rest.return(value),
    throw: (err?: unknown) => rest.throw(err),
  };
  return { [Symbol.asyncIterator]: () => iterator };
}

export const anthropicFactory: AdapterFactory = {
  type: 'anthropic',
  // `batch: native` runs batches sent to its models at Anthropic's own Message Batches.
  fields: { batch: 'optional' },
  defaultBaseUrl: 'https://api.anthropic.com',
  usesBaseUrl: true,
  create: (config) => new AnthropicAdapter(config),
};

function incomplete(provider: string): never {
  throw Errors.providerStreamIncomplete(provider);
}
