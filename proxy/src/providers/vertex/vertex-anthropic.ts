import { readSse } from '../sse-reader.js';
import { Errors, sseData } from '@gateway/shared';
import type { ChatRequest, CompletionResult, StreamMeta, StreamResult } from '../adapter.js';
import type { Cancel } from '../cancel.js';
import { anthropicStreamError } from '../anthropic/anthropic-errors.js';
import { chatAnthropic } from '../../conversion/chat-anthropic/chat-anthropic.js';
import { StreamTranslator } from '../../conversion/chat-anthropic/anthropic-stream.js';
import type { AnthropicResponse } from '../anthropic/anthropic-types.js';
import { newStreamMeta } from '../stream-inspector.js';
import { transportError } from '../upstream-error.js';
import type { UpstreamResponse } from '../upstream-request.js';
import { prepend, type Send } from './vertex-gemini.js';
import { jsonBytes } from '../../request/json-bytes.js';

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
    return this.answer(request, body);
  }

  /** A rawPredict answer (or a batch prediction's `response`): the OpenAI completion, or the message as it came for a native request. */
  answer(request: ChatRequest, body: Buffer): CompletionResult {
    let message: unknown = null;
    try {
      message = JSON.parse(body.toString('utf8'));
    } catch {
      // Refused below with the other shapes that are no message.
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message)) throw Errors.providerSentNot(this.provider, 'a JSON message');
    const answer = chatAnthropic.fromResponse(message as AnthropicResponse, { fallbackModel: request.upstreamModel });
    // A native request's answer is the message as it came, only read for its counts and stop reason.
    return isNative(request) ? { ...answer, body, native: true } : answer;
  }

  async stream(modelPath: string, request: ChatRequest, cancel: Cancel): Promise<StreamResult> {
    const res = await this.send(`${modelPath}:streamRawPredict`, this.payload(request), cancel, request);
    const meta = newStreamMeta();
    const translator = chatAnthropic.streamTranslator({ provider: this.provider, meta, clientWantsUsage: request.clientWantsUsage, requestId: request.requestId, fallbackModel: request.upstreamModel });
    const native = isNative(request);
    const events = this.events(res, translator, meta, cancel, native);
    const first = await events.next();
    return { meta, events: prepend(first, events), native };
  }

  /** The shared SSE read loop (sse-reader.ts): translated to OpenAI chunks, or the frames as Anthropic sent them for a native request, metered either way. */
  private events(res: UpstreamResponse, translator: StreamTranslator, meta: StreamMeta, cancel: Cancel, native: boolean): AsyncGenerator<string> {
    const provider = this.provider;
    let started = false;
    return readSse(res, provider, cancel, {
      event(event, out) {
        if (native) {
          // The translator still reads every event: it meters the stream and sees its end.
          const discard: string[] = [];
          translator.push(event.data, discard);
          if (meta.failed) throw anthropicStreamError(provider, event.data, started);
          out.push(event.event === undefined ? sseData(event.data) : `event: ${event.event}\n${sseData(event.data)}`);
        } else {
          translator.push(event.data, out);
          if (meta.failed) throw anthropicStreamError(provider, event.data, started);
        }
        if (out.length > 0) started = true;
        return translator.finished;
      },
      end: (out) => translator.end(out),
    });
  }

  /** The Messages body without `model` (it is in the path), with Vertex's API version (a batch prediction's `request` too). */
  payload(request: ChatRequest): Buffer {
    if (isNative(request)) {
      const { model: _model, ...rest } = request.native?.body ?? {};
      return jsonBytes(Object.assign(rest, { anthropic_version: VERTEX_ANTHROPIC_VERSION }));
    }
    const { model: _model, ...rest } = chatAnthropic.toRequest(request.body, { upstreamModel: request.upstreamModel, stream: request.stream, defaultMaxTokens: this.defaultMaxTokens });
    return jsonBytes({ anthropic_version: VERTEX_ANTHROPIC_VERSION, ...rest });
  }
}

function isNative(request: ChatRequest): boolean {
  return request.native?.protocol === 'anthropic-messages';
}
