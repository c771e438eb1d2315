import type { StreamMeta } from '../../request/internal-request.js';
import type { StreamWriter } from '../../protocols/protocol.js';
import { sseEvent } from '../../protocols/anthropic-messages/anthropic-errors.js';
import { anthropicUsage, stopReason } from '../anthropic-openai.js';
import { messageId } from '../../protocols/anthropic-messages/message-id.js';
import { readThinkingBlocks } from '../../request/thinking-blocks.js';

/**
 * The internal chunk stream as Anthropic's event sequence: message_start; for each content block
 * (the provider's thinking, the text, then each tool call, indexes in order) content_block_start,
 * its deltas (thinking_delta and the block's signature_delta, text_delta, input_json_delta) and
 * content_block_stop; message_delta (stop_reason and the whole usage);
 * message_stop. The prompt's token count is known only from the usage chunk at the end, so
 * message_start carries the gateway's prompt estimate (the one its quota reserved, never below
 * the provider's count) and message_delta the provider's count, which current SDKs adopt.
 */
interface ChunkDelta {
  reasoning_content?: unknown;
  thinking_blocks?: unknown;
  content?: unknown;
  refusal?: unknown;
  tool_calls?: { index?: unknown; id?: unknown; function?: { name?: unknown; arguments?: unknown } }[];
}

interface Chunk {
  id?: unknown;
  choices?: { delta?: ChunkDelta; finish_reason?: unknown }[];
}

export class MessageStreamWriter implements StreamWriter {
  private started = false;
  /** Index of the block open now (-1: none), and whether it is the text block or a thinking block. */
  private open = -1;
  private openIsText = false;
  private openIsThinking = false;
  private nextIndex = 0;
  /** Tool call index of the internal stream → index of its tool_use block. */
  private readonly calls = new Map<number, number>();

  constructor(
    private readonly model: string,
    private readonly promptEstimate: number,
  ) {}

  start(): string {
    return '';
  }

  chunk(data: string): string {
    let chunk: Chunk;
    try {
      chunk = JSON.parse(data) as Chunk;
    } catch {
      return '';
    }
    // message_start waits for the first chunk, whose id names the message.
    let out = this.started ? '' : this.messageStart(chunk.id);
    const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
    // The usage chunk (no choices) is read from the stream's meta at the end.
    if (choice === undefined) return out;
    const delta = choice.delta;
    if (delta !== undefined && delta !== null) {
      if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '') out += this.thinking(delta.reasoning_content);
      if (Array.isArray(delta.thinking_blocks)) out += this.thinkingDone(delta.thinking_blocks);
      if (typeof delta.content === 'string' && delta.content !== '') out += this.text(delta.content);
      if (typeof delta.refusal === 'string' && delta.refusal !== '') out += this.text(delta.refusal);
      if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls) out += this.toolCall(call);
    }
    if (typeof choice.finish_reason === 'string') out += this.closeBlock();
    return out;
  }

  end(meta: StreamMeta): string {
    let out = this.started ? '' : this.messageStart(undefined);
    out += this.closeBlock();
    const usage = anthropicUsage(meta.usage ?? { input: this.promptEstimate, output: meta.estimatedOutput });
    out += sseEvent('message_delta', JSON.stringify({ type: 'message_delta', delta: { stop_reason: stopReason(meta.finishReason), stop_sequence: null }, usage }));
    out += sseEvent('message_stop', '{"type":"message_stop"}');
    return out;
  }

  private messageStart(id: unknown): string {
    this.started = true;
    const message = {
      id: messageId(id),
      type: 'message',
      role: 'assistant',
      model: this.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: this.promptEstimate, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
    };
    return sseEvent('message_start', JSON.stringify({ type: 'message_start', message }));
  }

  private text(text: string): string {
    let out = '';
    if (this.open === -1 || !this.openIsText) out += this.openBlock({ type: 'text', text: '' }, true);
    return out + this.delta(this.open, { type: 'text_delta', text });
  }

  private thinking(text: string): string {
    let out = '';
    if (this.open === -1 || !this.openIsThinking) out += this.openBlock({ type: 'thinking', thinking: '', signature: '' }, false, true);
    return out + this.delta(this.open, { type: 'thinking_delta', thinking: text });
  }

  /** The provider's blocks came whole: the open thinking block gets its signature and closes; a block not streamed comes whole. */
  private thinkingDone(value: unknown[]): string {
    const blocks = readThinkingBlocks(value);
    if (blocks === null) return '';
    let out = '';
    for (const block of blocks) {
      if (block.type === 'redacted_thinking') {
        out += this.openBlock({ type: 'redacted_thinking', data: block.data }, false) + this.closeBlock();
        continue;
      }
      if (this.open === -1 || !this.openIsThinking) out += this.thinking(block.thinking);
      out += this.delta(this.open, { type: 'signature_delta', signature: block.signature }) + this.closeBlock();
    }
    return out;
  }

  private toolCall(call: NonNullable<ChunkDelta['tool_calls']>[number]): string {
    const callIndex = typeof call.index === 'number' ? call.index : 0;
    let out = '';
    let block = this.calls.get(callIndex);
    if (block === undefined) {
      const id = typeof call.id === 'string' && call.id !== '' ? call.id : `toolu_${this.nextIndex}`;
      const name = typeof call.function?.name === 'string' ? call.function.name : '';
      out += this.openBlock({ type: 'tool_use', id, name, input: {} }, false);
      block = this.open;
      this.calls.set(callIndex, block);
    }
    const args = call.function?.arguments;
    // Providers send one call's arguments after another; a piece for a call already closed still
    // names its own block, which the SDKs' accumulators honour.
    if (typeof args === 'string' && args !== '') out += this.delta(block, { type: 'input_json_delta', partial_json: args });
    return out;
  }

  private openBlock(contentBlock: Record<string, unknown>, isText: boolean, isThinking = false): string {
    const out = this.closeBlock();
    this.open = this.nextIndex++;
    this.openIsText = isText;
    this.openIsThinking = isThinking;
    return out + sseEvent('content_block_start', JSON.stringify({ type: 'content_block_start', index: this.open, content_block: contentBlock }));
  }

  private closeBlock(): string {
    if (this.open === -1) return '';
    const index = this.open;
    this.open = -1;
    return sseEvent('content_block_stop', `{"type":"content_block_stop","index":${index}}`);
  }

  private delta(index: number, delta: Record<string, unknown>): string {
    return sseEvent('content_block_delta', JSON.stringify({ type: 'content_block_delta', index, delta }));
  }
}
