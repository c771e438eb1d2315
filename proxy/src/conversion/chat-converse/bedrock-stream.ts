import type { ProviderStreamTranslator } from '../conversion.js';
import { Errors, type GatewayError } from '@gateway/shared';
import type { StreamMeta } from '../../providers/adapter.js';
import { estimateTokens } from '../../providers/stream-inspector.js';
import { bedrockExceptionError } from '../../providers/bedrock/bedrock-errors.js';
import { mapStopReason, openAiUsage, usageFrom } from './bedrock-usage.js';
import { streamedBlock } from '../../request/thinking-blocks.js';
import type { BedrockUsage } from '../../providers/bedrock/bedrock-wire.js';

/**
 * ConverseStream's events (already decoded from the binary event stream) as OpenAI chunks:
 *
 *   messageStart                          → the role chunk
 *   contentBlockStart {start.toolUse}     → a tool call's first delta: index, id, name, "" arguments
 *   contentBlockDelta {delta.text}        → a content delta
 *   contentBlockDelta {delta.toolUse}     → the call's arguments, piece by piece
 *   contentBlockDelta {delta.reasoningContent} → reasoning_content deltas (its text); its signature
 *                                           or redacted content is kept for the block's end
 *   contentBlockStop of reasoning         → the block whole, as a thinking_blocks delta
 *   messageStop {stopReason}              → the finish chunk
 *   metadata {usage}                      → the usage (and the usage chunk, when asked); the end
 *   an exception message                  → the stream fails (meta.failed)
 *
 * Reasoning is given as the Anthropic translation gives it (chat-anthropic/anthropic-stream.ts).
 */
export interface StreamContext {
  id: string;
  model: string;
  provider: string;
  clientWantsUsage: boolean;
}

/** One decoded message of Converse's event stream. */
export interface ConverseEvent {
  /** `event`, or `exception` / `error` for a failure. */
  messageType: string;
  /** The event's type (`contentBlockDelta`…), or the exception's. */
  eventType: string;
  payload: string;
}

export class BedrockStreamTranslator implements ProviderStreamTranslator<ConverseEvent> {
  /** metadata came: the answer is whole. */
  finished = false;
  /** A chunk was produced: an error now is a mid-stream failure, not a status. */
  started = false;
  private readonly prefix: string;
  /** Converse's content block index → the OpenAI tool call index. */
  private readonly calls = new Map<number, number>();
  private sawStop = false;
  /** Converse's content block index → the reasoning block being read there. */
  private readonly reasoning = new Map<number, { text: string; signature: string; redacted: string }>();

  constructor(
    private readonly meta: StreamMeta,
    private readonly context: StreamContext,
  ) {
    this.prefix = `{"id":${JSON.stringify(context.id)},"object":"chat.completion.chunk","created":${Math.floor(Date.now() / 1000)},"model":${JSON.stringify(context.model)},"choices":`;
  }

  /** One decoded event; its chunks are pushed to `out`. Throws the gateway's error for an exception message. */
  push(event: ConverseEvent, out: string[]): void {
    const { messageType, eventType, payload } = event;
    if (messageType !== 'event') {
      this.meta.failed = true;
      throw this.failure(eventType, payload);
    }
    let body: Record<string, any>;
    try {
      body = JSON.parse(payload) as Record<string, any>;
    } catch {
      return;
    }
    switch (eventType) {
      case 'messageStart':
        out.push(this.choice('{"role":"assistant","content":""}', 'null'));
        break;
      case 'contentBlockStart': {
        const use = body.start?.toolUse;
        if (use === undefined || use === null) break;
        const index = this.calls.size;
        this.calls.set(Number(body.contentBlockIndex), index);
        const call = { index, id: String(use.toolUseId ?? `call_${index}`), type: 'function', function: { name: String(use.name ?? ''), arguments: '' } };
        out.push(this.choice(`{"tool_calls":[${JSON.stringify(call)}]}`, 'null'));
        break;
      }
      case 'contentBlockDelta': {
        const delta = body.delta;
        if (typeof delta?.text === 'string') {
          this.meta.estimatedOutput += estimateTokens(delta.text.length);
          out.push(this.choice(`{"content":${JSON.stringify(delta.text)}}`, 'null'));
        } else if (typeof delta?.reasoningContent === 'object' && delta.reasoningContent !== null) {
          this.reason(Number(body.contentBlockIndex), delta.reasoningContent as { text?: unknown; signature?: unknown; redactedContent?: unknown }, out);
        } else if (typeof delta?.toolUse?.input === 'string') {
          const index = this.calls.get(Number(body.contentBlockIndex)) ?? 0;
          this.meta.estimatedOutput += estimateTokens(delta.toolUse.input.length);
          out.push(this.choice(`{"tool_calls":[{"index":${index},"function":{"arguments":${JSON.stringify(delta.toolUse.input)}}}]}`, 'null'));
        }
        break;
      }
      case 'contentBlockStop': {
        const index = Number(body.contentBlockIndex);
        const block = this.reasoning.get(index);
        if (block === undefined) break;
        this.reasoning.delete(index);
        const whole = streamedBlock(block.text, block.signature, block.redacted);
        if (whole !== null) out.push(this.choice(`{"thinking_blocks":[${JSON.stringify(whole)}]}`, 'null'));
        break;
      }
      case 'messageStop': {
        const finish = mapStopReason(body.stopReason);
        this.meta.finishReason = finish.gateway;
        if (finish.raw !== null) this.meta.rawFinishReason = finish.raw;
        this.sawStop = true;
        out.push(this.choice('{}', JSON.stringify(finish.openai)));
        break;
      }
      case 'metadata': {
        const usage = usageFrom(body.usage as BedrockUsage | undefined);
        this.meta.usage = usage;
        if (this.context.clientWantsUsage) out.push(`${this.prefix}[],"usage":${JSON.stringify(openAiUsage(usage))}}`);
        this.finished = this.sawStop;
        break;
      }
      default:
        break;
    }
    if (out.length > 0) this.started = true;
  }

  private reason(index: number, delta: { text?: unknown; signature?: unknown; redactedContent?: unknown }, out: string[]): void {
    let block = this.reasoning.get(index);
    if (block === undefined) this.reasoning.set(index, (block = { text: '', signature: '', redacted: '' }));
    if (typeof delta.signature === 'string') block.signature += delta.signature;
    if (typeof delta.redactedContent === 'string') block.redacted += delta.redactedContent;
    if (typeof delta.text === 'string' && delta.text !== '') {
      block.text += delta.text;
      this.meta.estimatedOutput += estimateTokens(delta.text.length);
      out.push(this.choice(`{"reasoning_content":${JSON.stringify(delta.text)}}`, 'null'));
    }
  }

  /** The stream ended before its metadata: the answer is partial. */
  end(_out: string[]): void {
    if (!this.finished) throw Errors.providerStreamIncomplete(this.context.provider);
  }

  private choice(delta: string, finish: string): string {
    return `${this.prefix}[{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finish}}]}`;
  }

  private failure(eventType: string, payload: string): GatewayError {
    return bedrockExceptionError(this.context.provider, eventType, payload, this.started);
  }
}
