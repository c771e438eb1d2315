import { createSseDecoder, GatewayError, sseData } from '@gateway/shared';
import type { ChatRequest, CompletionResult, StreamMeta, StreamResult } from '../adapter.js';
import type { Cancel } from '../cancel.js';
import { anthropicStreamError } from '../anthropic/anthropic-errors.js';
import { toAnthropicRequest } from '../anthropic/anthropic-request.js';
import { toChatCompletion } from '../anthropic/anthropic-response.js';
import { StreamTranslator } from '../anthropic/anthropic-stream.js';
import type { AnthropicResponse } from '../anthropic/anthropic-types.js';
import { newStreamMeta } from '../stream-inspector.js';
import { transportError } from '../upstream-error.js';
import type { UpstreamResponse } from '../upstream-request.js';
import { prepend, type Send } from './vertex-gemini.js';

/**
 * Claude models on Vertex AI: `…/publishers/anthropic/models/{model}:rawPredict` and
 * `:streamRawPredict` take Anthropic's Messages body with the model in the path instead of the
 * body and the API version as `anthropic_version: vertex-2023-10-16` in the body instead of a
 * header, and answer exactly as Anthropic does. The anthropic adapter's translation is used as it
 * is; a request that came in as Anthropic Messages (`/v1/messages`) goes as it came and is
 * answered natively.
 */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

export class VertexAnthropic {
  constructor(
    private readonly provider: string,
    private readonly send: Send,
    private readonly defaultMaxTokens: number,
  ) {}

  async complete(modelPath: string, request: ChatRequest, cancel: Cancel): Promise<CompletionResult> {
    const res = await this.send(`${modelPath}:rawPredict`, this.payload(request), cancel, request);
    let body: Buffer;
    try {
      body = await res.body();
    } catch (err) {
      throw transportError(this.provider, err, cancel.aborted);
    }
    let message: unknown = null;
    try {
      message = JSON.parse(body.toString('utf8'));
    } catch {
      // Refused below with the other shapes that are no message.
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message)) throw new GatewayError('UPSTREAM_ERROR', `Provider ${this.provider} sent a response that is not a JSON message.`);
    const { body: completion, usage, finish } = toChatCompletion(message as AnthropicResponse, request.upstreamModel);
    if (isNative(request)) return { status: 200, body, native: true, usage, finishReason: finish.gateway, rawFinishReason: finish.raw };
    return { status: 200, body: Buffer.from(JSON.stringify(completion)), usage, finishReason: finish.gateway, rawFinishReason: finish.raw };
  }

  async stream(modelPath: string, request: ChatRequest, cancel: Cancel): Promise<StreamResult> {
    const res = await this.send(`${modelPath}:streamRawPredict`, this.payload(request), cancel, request);
    const meta = newStreamMeta();
    const translator = new StreamTranslator(meta, request.clientWantsUsage, request.requestId, request.upstreamModel);
    const native = isNative(request);
    const events = this.events(res, translator, meta, cancel, native);
    const first = await events.next();
    return { meta, events: prepend(first, events), native };
  }

  private async *events(res: UpstreamResponse, translator: StreamTranslator, meta: StreamMeta, cancel: Cancel, native: boolean): AsyncGenerator<string> {
    const text = new TextDecoder();
    const queue: { data: string; frame: string | null }[] = [];
    const out: string[] = [];
    let started = false;
    const sse = createSseDecoder((event) => {
      queue.push({ data: event.data, frame: native ? (event.event === undefined ? sseData(event.data) : `event: ${event.event}\n${sseData(event.data)}`) : null });
    });
    try {
      for await (const chunk of res.stream()) {
        sse.feed(text.decode(chunk, { stream: true }));
        for (let i = 0; i < queue.length; i++) {
          const { data, frame } = queue[i] as { data: string; frame: string | null };
          translator.translate(data, out);
          if (meta.failed) throw anthropicStreamError(this.provider, data, started);
          if (frame !== null) {
            started = true;
            yield frame;
          } else {
            for (let j = 0; j < out.length; j++) {
              started = true;
              yield out[j] as string;
            }
          }
          out.length = 0;
          if (translator.finished) break;
        }
        queue.length = 0;
        if (translator.finished) {
          res.release();
          break;
        }
      }
    } catch (err) {
      if (translator.finished && !cancel.aborted) return;
      res.destroy();
      throw transportError(this.provider, err, cancel.aborted);
    } finally {
      if (!translator.finished) res.destroy();
    }
    if (!translator.finished) throw new GatewayError('UPSTREAM_ERROR', `Provider ${this.provider} ended the stream before it was complete.`);
  }

  /** The Messages body without `model` (it is in the path), with Vertex's API version. */
  private payload(request: ChatRequest): Buffer {
    if (isNative(request)) {
      const { model: _model, ...rest } = request.native?.body ?? {};
      return Buffer.from(JSON.stringify(Object.assign(rest, { anthropic_version: VERTEX_ANTHROPIC_VERSION })));
    }
    const { model: _model, ...rest } = toAnthropicRequest(request.body, { upstreamModel: request.upstreamModel, stream: request.stream, defaultMaxTokens: this.defaultMaxTokens });
    return Buffer.from(JSON.stringify({ anthropic_version: VERTEX_ANTHROPIC_VERSION, ...rest }));
  }
}

function isNative(request: ChatRequest): boolean {
  return request.native?.protocol === 'anthropic-messages';
}
