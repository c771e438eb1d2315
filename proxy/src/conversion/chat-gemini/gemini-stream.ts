import type { ProviderStreamTranslator } from '../conversion.js';
import { Errors } from '@gateway/shared';
import type { StreamMeta } from '../../providers/adapter.js';
import { estimateTokens } from '../../providers/stream-inspector.js';
import { BLOCKED, mapFinishReason, type Finish } from './gemini-finish.js';
import { readParts, toolCallId, type AnswerContext } from './gemini-response.js';
import { geminiStatusError, geminiStreamError } from '../../providers/gemini/gemini-error.js';
import { toUsage, type OpenAiUsage } from './gemini-usage.js';
import type { GeminiResponse } from '../../providers/gemini/gemini-wire.js';

/**
 * `streamGenerateContent?alt=sse` into OpenAI chunks. Each SSE event is a whole
 * GenerateContentResponse holding the next piece of the answer: its text becomes a content
 * delta, each `functionCall` (Gemini sends calls whole) a tool call numbered by this stream's own
 * counter, given as OpenAI streams them: id and name first, then the arguments. The role rides on
 * the first chunk; the finish reason comes once, as its own chunk; usage is the last
 * `usageMetadata` seen, sent as the final chunk only when the client asked for it.
 */
export interface StreamContext extends AnswerContext {
  provider: string;
  clientWantsUsage: boolean;
  /** The provider key, scrubbed from error messages. */
  secret: string | null;
}

export class GeminiStreamTranslator implements ProviderStreamTranslator<string> {
  /** Gemini marks no end: the answer is whole when the body ends (`end`). */
  readonly finished = false;
  private started = false;
  private calls = 0;
  private finish: Finish | null = null;
  private usage: OpenAiUsage | null = null;
  private readonly base: string;

  constructor(
    private readonly meta: StreamMeta,
    private readonly ctx: StreamContext,
  ) {
    // The fields every chunk repeats, serialised once.
    this.base = `{"id":${JSON.stringify(ctx.id)},"object":"chat.completion.chunk","created":${ctx.created},"model":${JSON.stringify(ctx.model)}`;
  }

  /** One SSE event's data; appends the chunks it becomes (possibly none) to `out`. */
  push(data: string, out: string[]): void {
    let event: GeminiResponse;
    try {
      event = JSON.parse(data) as GeminiResponse;
    } catch {
      throw Errors.providerEventNotJson(this.ctx.provider);
    }
    if (event === null || typeof event !== 'object') throw Errors.providerEventNotObject(this.ctx.provider);
    if (event.error !== undefined && event.error !== null) {
      this.meta.failed = true;
      // Before the first chunk the client has seen nothing: the error counts as the HTTP status
      // it carries (an overloaded model's 503 is retryable, and another provider may answer).
      const code = event.error.code;
      if (!this.started && typeof code === 'number' && code >= 400 && code < 600) throw geminiStatusError(this.ctx.provider, code, data, undefined, this.ctx.secret);
      throw geminiStreamError(this.ctx.provider, data, this.ctx.secret);
    }
    if (event.usageMetadata !== undefined) {
      const { usage, openai } = toUsage(event.usageMetadata);
      this.meta.usage = usage;
      this.usage = openai;
    }
    // Anything after the finish (normally nothing, or usage alone) adds no content.
    if (this.finish !== null) return;

    const candidate = event.candidates?.[0];
    if (candidate === undefined) {
      if (event.promptFeedback?.blockReason !== undefined) this.finishWith(BLOCKED, out);
      return;
    }
    const pieces = readParts(candidate.content?.parts);
    if (pieces.text !== '') {
      this.meta.estimatedOutput += estimateTokens(pieces.text.length);
      out.push(this.chunk({ content: pieces.text }));
    }
    for (const call of pieces.calls) {
      const index = this.calls++;
      this.meta.estimatedOutput += estimateTokens(call.arguments.length);
      out.push(this.chunk({ tool_calls: [{ index, id: toolCallId(this.ctx.firstCall + index), type: 'function', function: { name: call.name, arguments: '' } }] }));
      out.push(this.chunk({ tool_calls: [{ index, function: { arguments: call.arguments } }] }));
    }
    if (candidate.finishReason !== undefined && candidate.finishReason !== null) this.finishWith(mapFinishReason(candidate.finishReason, this.calls > 0), out);
  }

  /** The provider's stream ended: the usage chunk if asked for, or an error if it never finished. */
  end(out: string[]): void {
    if (this.finish === null) throw Errors.providerStreamIncomplete(this.ctx.provider);
    if (this.ctx.clientWantsUsage && this.usage !== null) out.push(`${this.base},"choices":[],"usage":${JSON.stringify(this.usage)}}`);
  }

  private finishWith(finish: Finish, out: string[]): void {
    this.finish = finish;
    this.meta.finishReason = finish.gateway;
    if (finish.raw !== null) this.meta.rawFinishReason = finish.raw;
    out.push(this.chunk({}, finish.openai));
  }

  private chunk(delta: Record<string, unknown>, finish: string | null = null): string {
    if (!this.started) {
      this.started = true;
      delta = { role: 'assistant', ...delta };
      if (delta.content === undefined) delta.content = delta.tool_calls === undefined ? '' : null;
    }
    return `${this.base},"choices":[{"index":0,"delta":${JSON.stringify(delta)},"logprobs":null,"finish_reason":${finish === null ? 'null' : JSON.stringify(finish)}}]}`;
  }
}
