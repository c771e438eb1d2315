import type { ProviderStreamTranslator } from '../conversion.js';
import { Errors } from '@gateway/shared';
import type { StreamMeta } from '../../providers/adapter.js';
import { estimateTokens } from '../../providers/stream-inspector.js';
import { mapStopReason, mergeUsage, openAiUsage, usageFrom } from '../anthropic-openai.js';
import { streamedBlock } from '../../request/thinking-blocks.js';
import type { AnthropicStreamEvent, AnthropicUsage } from '../../providers/anthropic/anthropic-types.js';

/**
 * Anthropic's Messages stream events as OpenAI chat.completion.chunk payloads, one event at a
 * time. message_start gives the role chunk (and the prompt's token counts); text and tool-input
 * deltas become content and tool-call deltas, tool calls numbered in the order they start (not
 * by Anthropic's block index, which counts text and thinking blocks too); message_delta carries
 * the stop reason and cumulative usage (the latest wins); message_stop gives the one finish
 * chunk, then the usage chunk if the client asked for it. Thinking deltas become
 * `reasoning_content` deltas, and each thinking block, once whole, one `thinking_blocks` delta
 * with its signature (LiteLLM's fields, anthropic-response.ts). Pings and event types added later
 * are skipped. An `error` event marks the stream failed: the adapter turns it into
 * the gateway's error.
 *
 * Chunks are written as text around JSON-escaped values: each is a fixed shape, and building an
 * object per delta only to serialise it again would be work thrown away.
 */
interface ToolState {
  index: number;
  /** Some of its input has been sent. */
  hasInput: boolean;
}

/** A thinking block being read: its text and signature arrive in deltas, the block is sent whole at its end. */
interface ThinkingState {
  thinking: string;
  signature: string;
  /** A redacted_thinking block's data (it comes whole, at its start). */
  data: string | null;
}

const OPEN_CHOICE = ',"choices":[{"index":0,"delta":';
const CLOSE_CHOICE = ',"logprobs":null,"finish_reason":null}]}';

export class StreamTranslator implements ProviderStreamTranslator<string> {
  /** message_stop was seen: nothing further is translated. */
  finished = false;
  private head: string | null = null;
  private id: string;
  private model: string;
  private created: number;
  private readonly tools = new Map<number, ToolState>();
  private readonly thinking = new Map<number, ThinkingState>();
  private toolCount = 0;
  private usage: AnthropicUsage = {};
  private stopReason: string | null = null;

  constructor(
    private readonly provider: string,
    private readonly meta: StreamMeta,
    private readonly clientWantsUsage: boolean,
    fallbackId: string,
    fallbackModel: string,
    now = Date.now(),
  ) {
    this.id = `chatcmpl-${fallbackId}`;
    this.model = fallbackModel;
    this.created = Math.floor(now / 1000);
  }

  /** The stream ended before message_stop: the answer is partial. */
  end(_out: string[]): void {
    if (!this.finished) throw Errors.providerStreamIncomplete(this.provider);
  }

  /** Appends the chunks `data` (one SSE data payload) stands for to `out`. */
  push(data: string, out: string[]): void {
    let event: AnthropicStreamEvent;
    try {
      event = JSON.parse(data) as AnthropicStreamEvent;
    } catch {
      throw Errors.providerEventNotJson();
    }
    if (typeof event !== 'object' || event === null) return;
    switch (event.type) {
      case 'message_start':
        return this.start(event, out);
      case 'content_block_start':
        return this.blockStart(event, out);
      case 'content_block_delta':
        return this.blockDelta(event, out);
      case 'content_block_stop':
        return this.blockStop(event, out);
      case 'message_delta':
        if (typeof event.delta?.stop_reason === 'string') this.stopReason = event.delta.stop_reason;
        this.addUsage(event.usage);
        this.meta.usage = usageFrom(this.usage);
        return;
      case 'message_stop':
        return this.stop(out);
      case 'error':
        this.meta.failed = true;
        return;
      default:
        // ping, and event types Anthropic may add: nothing for the client.
        return;
    }
  }

  private start(event: AnthropicStreamEvent, out: string[]): void {
    const message = event.message;
    if (typeof message?.id === 'string' && message.id !== '') this.id = `chatcmpl-${message.id}`;
    if (typeof message?.model === 'string' && message.model !== '') this.model = message.model;
    this.addUsage(message?.usage);
    this.head = null;
    out.push(this.chunk('{"role":"assistant","content":""}'));
  }

  private blockStart(event: AnthropicStreamEvent, out: string[]): void {
    const block = event.content_block;
    if (block?.type === 'text') {
      if (typeof block.text === 'string' && block.text !== '') this.text(block.text, out);
      return;
    }
    if (typeof event.index !== 'number') return;
    if (block?.type === 'thinking' || block?.type === 'redacted_thinking') {
      const redacted = block.type === 'redacted_thinking' && typeof block.data === 'string' ? block.data : null;
      this.thinking.set(event.index, { thinking: '', signature: '', data: redacted });
      if (typeof block.thinking === 'string' && block.thinking !== '') this.reasoning(event.index, block.thinking, out);
      return;
    }
    if (block?.type !== 'tool_use') return;
    const tool = { index: this.toolCount++, hasInput: false };
    this.tools.set(event.index, tool);
    const id = JSON.stringify(String(block.id ?? `call_${tool.index}`));
    const name = JSON.stringify(String(block.name ?? ''));
    out.push(this.chunk(`{"tool_calls":[{"index":${tool.index},"id":${id},"type":"function","function":{"name":${name},"arguments":""}}]}`));
    this.meta.estimatedOutput += 1;
  }

  private blockDelta(event: AnthropicStreamEvent, out: string[]): void {
    const delta = event.delta;
    if (delta?.type === 'text_delta') {
      if (typeof delta.text === 'string' && delta.text !== '') this.text(delta.text, out);
      return;
    }
    if (delta?.type === 'thinking_delta') {
      if (typeof event.index === 'number' && typeof delta.thinking === 'string' && delta.thinking !== '') this.reasoning(event.index, delta.thinking, out);
      return;
    }
    if (delta?.type === 'signature_delta') {
      const block = typeof event.index === 'number' ? this.thinking.get(event.index) : undefined;
      if (block !== undefined && typeof delta.signature === 'string') block.signature += delta.signature;
      return;
    }
    if (delta?.type !== 'input_json_delta' || typeof event.index !== 'number') return;
    const tool = this.tools.get(event.index);
    const json = delta.partial_json;
    if (tool === undefined || typeof json !== 'string' || json === '') return;
    tool.hasInput = true;
    this.meta.estimatedOutput += estimateTokens(json.length);
    out.push(this.chunk(`{"tool_calls":[{"index":${tool.index},"function":{"arguments":${JSON.stringify(json)}}}]}`));
  }

  /** A call without input still has arguments in OpenAI's terms: an empty object. */
  private blockStop(event: AnthropicStreamEvent, out: string[]): void {
    if (typeof event.index !== 'number') return;
    const thinking = this.thinking.get(event.index);
    if (thinking !== undefined) {
      this.thinking.delete(event.index);
      const block = streamedBlock(thinking.thinking, thinking.signature, thinking.data);
      if (block !== null) out.push(this.chunk(`{"thinking_blocks":[${JSON.stringify(block)}]}`));
      return;
    }
    const tool = this.tools.get(event.index);
    if (tool === undefined || tool.hasInput) return;
    tool.hasInput = true;
    out.push(this.chunk(`{"tool_calls":[{"index":${tool.index},"function":{"arguments":"{}"}}]}`));
  }

  private stop(out: string[]): void {
    this.finished = true;
    const finish = mapStopReason(this.stopReason);
    const usage = usageFrom(this.usage);
    this.meta.usage = usage;
    this.meta.finishReason = finish.gateway;
    if (finish.raw !== null) this.meta.rawFinishReason = finish.raw;
    out.push(`${this.prefix()}{},"logprobs":null,"finish_reason":"${finish.openai}"}]}`);
    if (this.clientWantsUsage) {
      out.push(JSON.stringify({ id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [], usage: openAiUsage(usage) }));
    }
  }

  private text(text: string, out: string[]): void {
    this.meta.estimatedOutput += estimateTokens(text.length);
    out.push(this.chunk(`{"content":${JSON.stringify(text)}}`));
  }

  private reasoning(index: number, text: string, out: string[]): void {
    const block = this.thinking.get(index);
    if (block !== undefined) block.thinking += text;
    this.meta.estimatedOutput += estimateTokens(text.length);
    out.push(this.chunk(`{"reasoning_content":${JSON.stringify(text)}}`));
  }

  private addUsage(usage: AnthropicUsage | undefined): void {
    mergeUsage(this.usage, usage);
  }

  private chunk(delta: string): string {
    return `${this.prefix()}${delta}${CLOSE_CHOICE}`;
  }

  private prefix(): string {
    if (this.head === null) {
      this.head = `{"id":${JSON.stringify(this.id)},"object":"chat.completion.chunk","created":${this.created},"model":${JSON.stringify(this.model)}${OPEN_CHOICE}`;
    }
    return this.head;
  }
}
