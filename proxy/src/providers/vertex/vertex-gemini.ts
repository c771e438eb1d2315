import { Errors } from '@gateway/shared';
import type { ChatRequest, CompletionResult, StreamResult } from '../adapter.js';
import type { Cancel } from '../cancel.js';
import { chatGemini } from '../../conversion/chat-gemini/chat-gemini.js';
import type { AnswerContext } from '../../conversion/chat-gemini/gemini-response.js';
import { geminiEvents } from '../gemini/gemini-events.js';
import type { GeminiResponse } from '../gemini/gemini-wire.js';
import { newStreamMeta } from '../stream-inspector.js';
import { transportError } from '../upstream-error.js';
import type { UpstreamResponse } from '../upstream-request.js';
import { jsonBytes } from '../../request/json-bytes.js';

/**
 * Gemini models on Vertex AI: `…/publishers/google/models/{model}:generateContent` and
 * `:streamGenerateContent?alt=sse` take and give the Gemini API's own bodies, so the gemini
 * adapter's translation (request, answer, stream) is used as it is.
 */
export type Send = (path: string, payload: Buffer, cancel: Cancel, request: ChatRequest) => Promise<UpstreamResponse>;

export class VertexGemini {
  constructor(
    private readonly provider: string,
    private readonly send: Send,
  ) {}

  async complete(modelPath: string, request: ChatRequest, cancel: Cancel): Promise<CompletionResult> {
    const res = await this.send(`${modelPath}:generateContent`, this.payload(request), cancel, request);
    let body: Buffer;
    try {
      body = await res.body();
    } catch (err) {
      throw transportError(this.provider, err, cancel.aborted);
    }
    return this.answer(request, body);
  }

  /** A generateContent answer (or a batch prediction's `response`) as the OpenAI completion. */
  answer(request: ChatRequest, body: Buffer): CompletionResult {
    let response: GeminiResponse;
    try {
      response = JSON.parse(body.toString('utf8')) as GeminiResponse;
    } catch {
      throw Errors.providerNotJson(this.provider);
    }
    if (response === null || typeof response !== 'object') throw Errors.providerSentNot(this.provider, 'an object');
    return chatGemini.fromResponse(response, { ...context(request, response.responseId), provider: this.provider });
  }

  async stream(modelPath: string, request: ChatRequest, cancel: Cancel): Promise<StreamResult> {
    const res = await this.send(`${modelPath}:streamGenerateContent?alt=sse`, this.payload(request), cancel, request);
    const meta = newStreamMeta();
    const translator = chatGemini.streamTranslator(Object.assign(context(request, undefined), { meta, provider: this.provider, clientWantsUsage: request.clientWantsUsage, secret: null }));
    const events = geminiEvents(res, this.provider, cancel, translator);
    // Answered once the first chunk is in: an error event in place of the answer fails over.
    const first = await events.next();
    return { meta, events: prepend(first, events) };
  }

  /** The generateContent body of a request (a batch prediction's `request` too). */
  payload(request: ChatRequest): Buffer {
    return jsonBytes(chatGemini.toRequest(request.body, {}));
  }
}

function context(request: ChatRequest, responseId: string | undefined): AnswerContext {
  return {
    id: `chatcmpl-${typeof responseId === 'string' && responseId !== '' ? responseId : request.requestId}`,
    model: request.model,
    created: Math.floor(Date.now() / 1000),
    firstCall: countToolCalls(request.body.messages),
  };
}

/** Tool calls already in the conversation: the answer's own are numbered on from there. */
function countToolCalls(messages: unknown): number {
  if (!Array.isArray(messages)) return 0;
  let n = 0;
  for (const message of messages as { tool_calls?: unknown }[]) if (Array.isArray(message?.tool_calls)) n += message.tool_calls.length;
  return n;
}

export async function* prepend(first: IteratorResult<string>, rest: AsyncGenerator<string>): AsyncGenerator<string> {
  if (first.done === true) return;
  yield first.value;
  yield* rest;
}
