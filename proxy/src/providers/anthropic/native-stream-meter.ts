import { Errors } from '@gateway/shared';
import { mapStopReason, mergeUsage, usageFrom } from '../../conversion/anthropic-openai.js';
import type { StreamMeta } from '../adapter.js';
import { estimateTokens, stringLength } from '../stream-inspector.js';
import type { AnthropicStreamEvent, AnthropicUsage } from './anthropic-types.js';

/**
 * What the gateway records of a native (Anthropic client to Anthropic provider) stream, read
 * without translating it: only the events that carry counts, the stop reason or a failure
 * (message_start, message_delta, message_stop, error) are parsed; a content delta is measured by
 * a scan of its text for the estimate of a stream cut short; everything else passes untouched.
 * The frames themselves go to the client as Anthropic sent them.
 */
export class NativeStreamMeter {
  /** message_stop was seen: the message is whole. */
  finished = false;
  private readonly usage: AnthropicUsage = {};
  private stopReason: string | null = null;

  constructor(private readonly meta: StreamMeta) {}

  /** One SSE event: its `event:` name (Anthropic always sends one) and its data. */
  read(name: string | undefined, data: string): void {
    switch (name) {
      case 'content_block_delta':
        this.meta.estimatedOutput += estimateTokens(stringLength(data, '"text":"') + stringLength(data, '"partial_json":"'));
        return;
      case 'content_block_start':
      case 'content_block_stop':
      case 'ping':
        return;
      default:
        return this.counted(data);
    }
  }

  private counted(data: string): void {
    let event: AnthropicStreamEvent;
    try {
      event = JSON.parse(data) as AnthropicStreamEvent;
    } catch {
      throw Errors.providerEventNotJson();
    }
    if (typeof event !== 'object' || event === null) return;
    switch (event.type) {
      case 'message_start':
        mergeUsage(this.usage, event.message?.usage);
        return;
      case 'message_delta':
        if (typeof event.delta?.stop_reason === 'string') this.stopReason = event.delta.stop_reason;
        mergeUsage(this.usage, event.usage);
        this.meta.usage = usageFrom(this.usage);
        return;
      case 'message_stop': {
        this.finished = true;
        const finish = mapStopReason(this.stopReason);
        this.meta.usage = usageFrom(this.usage);
        this.meta.finishReason = finish.gateway;
        if (finish.raw !== null) this.meta.rawFinishReason = finish.raw;
        return;
      }
      case 'error':
        this.meta.failed = true;
        return;
      case 'content_block_delta':
        // An event without its `event:` line: measured like the others.
        this.meta.estimatedOutput += estimateTokens(stringLength(data, '"text":"') + stringLength(data, '"partial_json":"'));
        return;
      default:
        return;
    }
  }
}
