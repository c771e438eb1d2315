import { Pool } from 'undici';
import { createSseDecoder, GatewayError, normaliseFinishReason, type ModelEntry, type ProviderConfig } from '@gateway/shared';
import type { AdapterFactory, ChatRequest, CompletionResult, ProviderAdapter, StreamMeta, StreamResult } from '../adapter.js';
import { inspectChunk, newStreamMeta } from '../stream-inspector.js';
import { scanCompletion } from './completion-scan.js';
import type { Cancel } from '../cancel.js';
import { providerStatusError, readLimited, streamErrorEvent, transportError } from '../upstream-error.js';
import { UpstreamResponse } from '../upstream-request.js';

/**
 * Any server speaking OpenAI's Chat Completions protocol (OpenAI itself, vLLM, llama.cpp,
 * LiteLLM, Azure-compatible endpoints…). Requests go over a keep-alive undici Pool per provider;
 * the client's body is forwarded as it came, except that a stream always asks for the usage chunk
 * so that streamed requests are billed with the provider's own token counts.
 */
export class OpenAiAdapter implements ProviderAdapter {
  readonly type = 'openai';
  readonly name: string;
  readonly models: readonly ModelEntry[];
  private readonly pool: Pool;
  private readonly path: string;
  private readonly headers: Record<string, string>;
  private readonly maxQueued: number;
  private readonly maxConnections: number;
  /** Exchanges under way (each holds a connection until its body ends): beyond max_connections they wait. */
  private outstanding = 0;
  private readonly settled = () => {
    this.outstanding--;
  };

  constructor(config: ProviderConfig) {
    if (config.base_url === null) throw new Error(`provider ${config.name}: base_url is required`);
    this.name = config.name;
    this.models = config.models;
    const url = new URL(`${config.base_url}/chat/completions`);
    this.path = url.pathname + url.search;
    this.pool = new Pool(url.origin, {
      connections: config.max_connections,
      connect: { timeout: config.connect_timeout_ms },
      headersTimeout: config.timeout_ms,
      bodyTimeout: config.idle_timeout_ms,
      keepAliveTimeout: 30_000,
    });
    this.maxQueued = config.max_queued;
    this.maxConnections = config.max_connections;
    this.headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    if (config.api_key !== null) this.headers.authorization = `Bearer ${config.api_key}`;
  }

  async complete(request: ChatRequest, cancel: Cancel): Promise<CompletionResult> {
    const res = await this.send(this.payload(request), cancel);
    let body: Buffer;
    try {
      body = await res.body();
    } catch (err) {
      throw transportError(this.name, err, cancel.aborted);
    }
    const facts = scanCompletion(body);
    if (facts === null) throw new GatewayError('UPSTREAM_ERROR', `Provider ${this.name} sent a response that is not JSON.`);
    return {
      status: 200,
      body,
      usage: { input: facts.input, output: facts.output, cached: facts.cached },
      finishReason: normaliseFinishReason(facts.finishReason),
    };
  }

  async stream(request: ChatRequest, cancel: Cancel): Promise<StreamResult> {
    const res = await this.send(this.payload(request), cancel);
    const meta = newStreamMeta();
    return { meta, events: this.events(res, meta, request.clientWantsUsage, cancel) };
  }

  private async *events(res: UpstreamResponse, meta: StreamMeta, clientWantsUsage: boolean, cancel: Cancel): AsyncGenerator<string> {
    const text = new TextDecoder();
    const queue: string[] = [];
    let head = 0;
    let done = false;
    const sse = createSseDecoder((event) => queue.push(event.data));
    try {
      for await (const chunk of res.stream()) {
        // After [DONE] the rest of the body (normally just its end) is read and ignored: giving
        // up early would close a pooled keep-alive connection.
        if (done) continue;
        sse.feed(text.decode(chunk, { stream: true }));
        while (head < queue.length) {
          const data = queue[head++] as string;
          if (data === '[DONE]') {
            done = true;
            break;
          }
          const forward = inspectChunk(data, meta, clientWantsUsage);
          // An error event is the provider's word that the answer failed: the client gets the
          // gateway's one error event (scrubbed), and the request is recorded as an error.
          if (meta.failed) throw streamErrorEvent(this.name, data);
          if (forward !== null) yield forward;
        }
        queue.length = 0;
        head = 0;
      }
    } catch (err) {
      if (done && !cancel.aborted) return;
      res.destroy();
      throw transportError(this.name, err, cancel.aborted);
    } finally {
      // The consumer left early (client gone, key revoked): stop the provider too.
      if (!done) res.destroy();
    }
    if (!done && meta.finishReason === null) {
      throw new GatewayError('UPSTREAM_ERROR', `Provider ${this.name} ended the stream before it was complete.`);
    }
  }

  /**
   * The client's bytes when they can go as they are; re-serialised only to name the provider's
   * own model, or to ask for the usage chunk a stream is billed from.
   */
  private payload(request: ChatRequest): Buffer {
    const renamed = request.upstreamModel !== request.model;
    const askUsage = request.stream && !request.clientWantsUsage;
    if (!renamed && !askUsage) return request.raw;
    const body: Record<string, unknown> = { ...request.body, model: request.upstreamModel };
    if (askUsage) body.stream_options = { ...(request.body.stream_options as object | undefined), include_usage: true };
    return Buffer.from(JSON.stringify(body));
  }

  queueDepth(): number {
    return Math.max(0, this.outstanding - this.maxConnections);
  }

  private async send(payload: Buffer, cancel: Cancel): Promise<UpstreamResponse> {
    // Past the queue bound a request would wait behind thousands of others: refuse it at once so
    // the client (or a load balancer) can go elsewhere, rather than queue without limit.
    if (this.outstanding - this.maxConnections >= this.maxQueued) {
      throw new GatewayError('UNAVAILABLE', `Provider ${this.name} has too many requests waiting; retry shortly.`, { retryAfter: 1, retryable: true });
    }
    let res: UpstreamResponse;
    this.outstanding++;
    try {
      res = await UpstreamResponse.post(this.pool, this.path, this.headers, payload, cancel, this.settled);
    } catch (err) {
      throw transportError(this.name, err, cancel.aborted);
    }
    if (res.status !== 200) {
      const text = await readLimited(res);
      throw providerStatusError(this.name, res.status, text, res.header('retry-after'));
    }
    return res;
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}

export const openAiFactory: AdapterFactory = {
  type: 'openai',
  defaultBaseUrl: 'https://api.openai.com/v1',
  usesBaseUrl: true,
  create: (config) => new OpenAiAdapter(config),
};
