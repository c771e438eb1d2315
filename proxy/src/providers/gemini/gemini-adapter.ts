import { Errors, type ModelEntry, type ProviderConfig } from '@gateway/shared';
import type { AdapterFactory, ChatRequest, CompletionResult, EmbeddingsRequest, EmbeddingsResult, ProviderAdapter, StreamResult } from '../adapter.js';
import type { ParamTable } from '../../conversion/param-support.js';
import type { Cancel } from '../cancel.js';
import { newStreamMeta } from '../stream-inspector.js';
import { transportError } from '../upstream-error.js';
import type { UpstreamResponse } from '../upstream-request.js';
import { fromGeminiEmbeddings, toGeminiEmbeddings } from './gemini-embeddings.js';
import { geminiStatusError } from './gemini-error.js';
import { parseGeminiOptions } from './gemini-options.js';
import type { GeminiRequestOptions } from '../../conversion/chat-gemini/gemini-request.js';
import { chatGemini } from '../../conversion/chat-gemini/chat-gemini.js';
import type { AnswerContext } from '../../conversion/chat-gemini/gemini-response.js';
import { geminiEvents } from './gemini-events.js';
import type { GeminiResponse } from './gemini-wire.js';
import { ProviderConnection } from '../provider-connection.js';
import { GEMINI_PARAMS } from './gemini-params.js';
import { jsonBytes } from '../../request/json-bytes.js';

/**
 * Google's Gemini API (`generateContent`, `streamGenerateContent?alt=sse`) behind the OpenAI
 * interface: the request is translated (gemini-request.ts), the answer translated back
 * (gemini-response.ts, gemini-stream.ts). The key goes in `x-goog-api-key`, never in the URL,
 * so it cannot end up in a log of URLs. Connections and the waiting bound work as for every
 * pooled adapter: beyond max_connections requests wait, beyond max_queued more they are refused.
 */
export class GeminiAdapter implements ProviderAdapter {
  readonly type = 'gemini';
  readonly name: string;
  readonly models: readonly ModelEntry[];
  private readonly connection: ProviderConnection;
  /** Path up to the API version, from base_url (a base_url may carry a path prefix). */
  private readonly prefix: string;
  private readonly secret: string | null;
  private readonly requestOptions: GeminiRequestOptions;

  constructor(config: ProviderConfig) {
    if (config.base_url === null) throw new Error(`provider ${config.name}: base_url is required`);
    this.name = config.name;
    this.models = config.models;
    const options = parseGeminiOptions(config.name, config.options);
    this.requestOptions = options.safetySettings === undefined ? {} : { safetySettings: options.safetySettings };
    const url = new URL(config.base_url);
    this.prefix = `${url.pathname.replace(/\/+$/, '')}/${options.apiVersion}/models/`;
    const origin = url.origin;
    this.secret = config.api_key;
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    if (config.api_key !== null) headers['x-goog-api-key'] = config.api_key;
    this.connection = new ProviderConnection(config, origin, headers);
  }

  async complete(request: ChatRequest, cancel: Cancel): Promise<CompletionResult> {
    const payload = this.payload(request);
    const res = await this.send(`${this.modelPath(request)}:generateContent`, payload, cancel, request);
    let body: Buffer;
    try {
      body = await res.body();
    } catch (err) {
      throw transportError(this.name, err, cancel.aborted);
    }
    let response: GeminiResponse;
    try {
      response = JSON.parse(body.toString('utf8')) as GeminiResponse;
    } catch {
      throw Errors.providerNotJson(this.name);
    }
    if (response === null || typeof response !== 'object') throw Errors.providerSentNot(this.name, 'an object');
    return chatGemini.fromResponse(response, { ...this.context(request, response.responseId), provider: this.name });
  }

  async stream(request: ChatRequest, cancel: Cancel): Promise<StreamResult> {
    const payload = this.payload(request);
    const res = await this.send(`${this.modelPath(request)}:streamGenerateContent?alt=sse`, payload, cancel, request);
    const meta = newStreamMeta();
    const translator = chatGemini.streamTranslator(Object.assign(this.context(request, undefined), { meta, provider: this.name, clientWantsUsage: request.clientWantsUsage, secret: this.secret }));
    const events = geminiEvents(res, this.name, cancel, translator);
    // The stream is answered once its first chunk is in: Gemini may send an error event (an
    // overloaded model) in place of the answer, and that must fail over like an error status.
    const first = await events.next();
    return { meta, events: prepend(first, events) };
  }

  /** Embeddings through `:batchEmbedContents`, translated both ways (gemini-embeddings.ts). */
  async embed(request: EmbeddingsRequest, cancel: Cancel): Promise<EmbeddingsResult> {
    const model = upstreamName(request.upstreamModel);
    const batch = toGeminiEmbeddings(request, model);
    const res = await this.send(`${this.prefix}${encodeURIComponent(model)}:batchEmbedContents`, jsonBytes(batch), cancel, request);
    let body: Buffer;
    try {
      body = await res.body();
    } catch (err) {
      throw transportError(this.name, err, cancel.aborted);
    }
    return fromGeminiEmbeddings(this.name, body, request, batch.requests.length);
  }

  private payload(request: ChatRequest): Buffer {
    return jsonBytes(chatGemini.toRequest(request.body, this.requestOptions));
  }

  private modelPath(request: ChatRequest): string {
    return this.prefix + encodeURIComponent(upstreamName(request.upstreamModel));
  }

  private context(request: ChatRequest, responseId: string | undefined): AnswerContext {
    return {
      id: `chatcmpl-${typeof responseId === 'string' && responseId !== '' ? responseId : request.requestId}`,
      model: request.model,
      created: Math.floor(Date.now() / 1000),
      firstCall: countToolCalls(request.body.messages),
    };
  }

  queueDepth(): number {
    return this.connection.queueDepth();
  }

  private send(path: string, payload: Buffer, cancel: Cancel, request: { traceHeaders?: Record<string, string> } | null): Promise<UpstreamResponse> {
    return this.connection.post(path, payload, cancel, request, (status, text, res) => geminiStatusError(this.name, status, text, res.header('retry-after'), this.secret));
  }

  paramsFor(): ParamTable {
    return GEMINI_PARAMS;
  }

  async close(): Promise<void> {
    await this.connection.close();
  }
}

/** A model's name without the `models/` a providers file may give it. */
function upstreamName(upstream: string): string {
  return upstream.startsWith('models/') ? upstream.slice(7) : upstream;
}

async function* prepend(first: IteratorResult<string>, rest: AsyncGenerator<string>): AsyncGenerator<string> {
  if (first.done === true) return;
  yield first.value;
  yield* rest;
}

/** Tool calls already in the conversation: the answer's own are numbered on from there. */
function countToolCalls(messages: unknown): number {
  if (!Array.isArray(messages)) return 0;
  let n = 0;
  for (const message of messages as { tool_calls?: unknown }[]) if (Array.isArray(message?.tool_calls)) n += message.tool_calls.length;
  return n;
}

export const geminiFactory: AdapterFactory = {
  type: 'gemini',
  defaultBaseUrl: 'https://generativelanguage.googleapis.com',
  usesBaseUrl: true,
  create: (config) => new GeminiAdapter(config),
};
