import type { GatewayError } from '@gateway/shared';
import type { StreamMeta } from '../../request/internal-request.js';
import type { StreamWriter } from '../../protocols/protocol.js';
import { isObject } from '../../protocols/openai-responses/checks.js';
import {
  contentPartObject,
  countsFromChatUsage,
  failedError,
  messageItem,
  newId,
  outcomeOf,
  reasoningItem,
  responseObject,
  summaryWanted,
  toolCallItem,
  type ContentPart,
  type FailedError,
  type ItemStatus,
  type Outcome,
  type ResponseState,
  type TokenCounts,
} from './response-object.js';
import type { ToolOrigin } from './tools.js';
import type { ThinkingBlock } from '../../request/openai-chat.js';
import { readThinkingBlocks } from '../../request/thinking-blocks.js';

/**
 * Chat completion chunks as the Responses event stream, each event named on its `event:` line and
 * numbered by `sequence_number`:
 *
 *   response.created, response.in_progress
 *   reasoning:     output_item.added, reasoning_summary_part.added, reasoning_summary_text.delta…,
 *                  reasoning_summary_text.done, reasoning_summary_part.done, output_item.done
 *                  (the summary events only when `reasoning.summary` was asked for)
 *   message:       output_item.added, content_part.added, output_text.delta…,
 *                  output_text.done, content_part.done, output_item.done
 *   function call: output_item.added, function_call_arguments.delta…,
 *                  function_call_arguments.done, output_item.done
 *   response.completed | response.incomplete (the whole response, usage included)
 *
 * Reasoning (`reasoning_content` deltas) opens a reasoning item, which a `thinking_blocks` delta
 * (the provider's block, whole) closes with its `encrypted_content`. Text opens a message item;
 * the first delta of a tool call closes it and opens a function_call item. Calls stay open until the end, since a provider may interleave the argument pieces of
 * parallel calls. A failure after the stream started (provider error, key deleted) ends it with an
 * `error` event, then `response.failed`: `error` first, so that the openai SDK throws and the
 * Vercel AI SDK reports the failure once (it reports a `response.failed` that follows an error no
 * more). The `error` event carries its fields both at the top, as OpenAI documents them, and
 * nested under `error`, as the live API sends them and the SDKs test for.
 */
interface MessageState {
  kind: 'message';
  index: number;
  id: string;
  parts: ContentPart[];
  status: ItemStatus;
}

interface ReasoningState {
  kind: 'reasoning';
  index: number;
  id: string;
  text: string;
  blocks: ThinkingBlock[] | null;
  /** The summary part was announced (reasoning_summary_part.added). */
  partOpen: boolean;
  status: ItemStatus;
}

interface CallState {
  kind: 'function_call';
  index: number;
  id: string;
  callId: string;
  name: string;
  args: string;
  status: ItemStatus;
}

export class ResponseStreamWriter implements StreamWriter {
  private sequence = 0;
  private readonly id = newId('resp');
  private readonly createdAt = Math.floor(Date.now() / 1000);
  private readonly items: (MessageState | CallState | ReasoningState)[] = [];
  /** The message item text goes to, while it is open. */
  private message: MessageState | null = null;
  /** The reasoning item reasoning goes to, while it is open. */
  private thinking: ReasoningState | null = null;
  private readonly summary: boolean;
  /** Function call items by the chat tool call `index`. */
  private readonly calls = new Map<number, CallState>();
  private finishReason: string | null = null;
  private counts: TokenCounts | null = null;
  private ended = false;
  /** The Response the stream ended with (`final`). */
  private last: Record<string, unknown> | null = null;

  constructor(
    private readonly model: string,
    private readonly echo: Readonly<Record<string, unknown>>,
    private readonly origins?: ReadonlyMap<string, ToolOrigin>,
  ) {
    this.summary = summaryWanted(echo);
  }

  start(): string {
    const response = this.snapshot({ status: 'in_progress' });
    return this.event('response.created', { response }) + this.event('response.in_progress', { response });
  }

  chunk(data: string): string {
    if (this.ended) return '';
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      return '';
    }
    if (!isObject(chunk)) return '';
    const counts = countsFromChatUsage(chunk.usage);
    if (counts !== null) this.counts = counts;
    // A Response has one answer: the first choice's.
    const choice: unknown = Array.isArray(chunk.choices) ? chunk.choices.find((c: unknown) => isObject(c) && (c.index ?? 0) === 0) : undefined;
    if (!isObject(choice)) return '';
    let out = '';
    const delta = choice.delta;
    if (isObject(delta)) {
      if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '') out += this.reasoning(delta.reasoning_content);
      if (Array.isArray(delta.thinking_blocks)) out += this.thinkingDone(delta.thinking_blocks);
      if (typeof delta.content === 'string' && delta.content !== '') out += this.text('output_text', delta.content);
      if (typeof delta.refusal === 'string' && delta.refusal !== '') out += this.text('refusal', delta.refusal);
      if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls) out += this.toolCall(call);
    }
    if (typeof choice.finish_reason === 'string') this.finishReason = choice.finish_reason;
    return out;
  }

  end(meta: StreamMeta): string {
    if (this.ended) return '';
    this.ended = true;
    const outcome = outcomeOf(this.finishReason ?? meta.finishReason);
    const status: ItemStatus = outcome.status === 'incomplete' ? 'incomplete' : 'completed';
    let out = '';
    // An empty answer is still one message with empty text, as in the whole response.
    if (this.items.length === 0) out += this.text('output_text', '');
    out += this.closeAll(status);
    const response = this.snapshot({ status: outcome.status, incompleteDetails: outcome.incompleteDetails, usage: this.usage(meta) });
    this.last = response;
    return out + this.event(outcome.status === 'completed' ? 'response.completed' : 'response.incomplete', { response });
  }

  final(): Record<string, unknown> | null {
    return this.last;
  }

  error(err: GatewayError): string {
    if (this.ended) return '';
    this.ended = true;
    const error = { type: err.type, code: err.code, message: err.message, param: err.param };
    const failed = this.snapshot({ status: 'failed', error: failedError(err) });
    return this.event('error', { code: err.code, message: err.message, param: err.param, error }) + this.event('response.failed', { response: failed });
  }

  /** Appends reasoning to the open reasoning item, opening it (and its summary part) as needed. */
  private reasoning(piece: string): string {
    let out = this.thinking === null ? this.openReasoning() : '';
    const item = this.thinking as ReasoningState;
    item.text += piece;
    if (!this.summary) return out;
    if (!item.partOpen) {
      item.partOpen = true;
      out += this.event('response.reasoning_summary_part.added', { item_id: item.id, output_index: item.index, summary_index: 0, part: { type: 'summary_text', text: '' } });
    }
    return out + this.event('response.reasoning_summary_text.delta', { item_id: item.id, output_index: item.index, summary_index: 0, delta: piece });
  }

  /** The provider's thinking block came whole: the reasoning item it ends is done, with it as its encrypted_content. */
  private thinkingDone(value: unknown[]): string {
    const blocks = readThinkingBlocks(value);
    if (blocks === null) return '';
    const out = this.thinking === null ? this.openReasoning() : '';
    const item = this.thinking as ReasoningState;
    item.blocks = [...(item.blocks ?? []), ...blocks];
    return out + this.closeReasoning(item, 'completed');
  }

  /** Opens a reasoning item; reasoning after text is a new step of the model's, so the text's item is done first. */
  private openReasoning(): string {
    const out = this.message === null ? '' : this.closeMessage(this.message, 'completed');
    const item: ReasoningState = { kind: 'reasoning', index: this.items.length, id: newId('rs'), text: '', blocks: null, partOpen: false, status: 'in_progress' };
    this.items.push(item);
    this.thinking = item;
    return out + this.event('response.output_item.added', { output_index: item.index, item: reasoningItem(item.id, 'in_progress', null, null) });
  }

  private closeReasoning(item: ReasoningState, status: ItemStatus): string {
    if (this.thinking === item) this.thinking = null;
    item.status = status;
    let out = '';
    const summary = this.summary && item.text !== '' ? item.text : null;
    if (item.partOpen) {
      out += this.event('response.reasoning_summary_text.done', { item_id: item.id, output_index: item.index, summary_index: 0, text: item.text });
      out += this.event('response.reasoning_summary_part.done', { item_id: item.id, output_index: item.index, summary_index: 0, part: { type: 'summary_text', text: item.text } });
    }
    return out + this.event('response.output_item.done', { output_index: item.index, item: reasoningItem(item.id, status, summary, item.blocks) });
  }

  /** Appends text (or refusal text) to the open message item, opening the item and the part as needed. */
  private text(type: ContentPart['type'], piece: string): string {
    let out = this.thinking === null ? '' : this.closeReasoning(this.thinking, 'completed');
    let message = this.message;
    if (message === null) {
      message = { kind: 'message', index: this.items.length, id: newId('msg'), parts: [], status: 'in_progress' };
      this.items.push(message);
      this.message = message;
      out += this.event('response.output_item.added', { output_index: message.index, item: messageItem(message.id, 'in_progress', []) });
    }
    const last = message.parts.at(-1);
    let part: ContentPart;
    if (last !== undefined && last.type === type) part = last;
    else {
      part = { type, text: '' };
      message.parts.push(part);
      out += this.event('response.content_part.added', { item_id: message.id, output_index: message.index, content_index: message.parts.length - 1, part: contentPartObject(part) });
    }
    if (piece === '') return out;
    part.text += piece;
    const at = { item_id: message.id, output_index: message.index, content_index: message.parts.length - 1, delta: piece };
    return out + (type === 'output_text' ? this.event('response.output_text.delta', { item_id: at.item_id, output_index: at.output_index, content_index: at.content_index, delta: piece, logprobs: [] }) : this.event('response.refusal.delta', at));
  }

  private toolCall(call: unknown): string {
    if (!isObject(call)) return '';
    const index = typeof call.index === 'number' ? call.index : 0;
    const fn = isObject(call.function) ? call.function : {};
    let out = '';
    let state = this.calls.get(index);
    if (state === undefined) {
      if (this.thinking !== null) out += this.closeReasoning(this.thinking, 'completed');
      if (this.message !== null) out += this.closeMessage(this.message, 'completed');
      const callId = typeof call.id === 'string' && call.id !== '' ? call.id : newId('call');
      state = { kind: 'function_call', index: this.items.length, id: newId('fc'), callId, name: typeof fn.name === 'string' ? fn.name : '', args: '', status: 'in_progress' };
      this.items.push(state);
      this.calls.set(index, state);
      out += this.event('response.output_item.added', { output_index: state.index, item: this.callItem(state, '', 'in_progress') });
    }
    const args = fn.arguments;
    if (typeof args === 'string' && args !== '') {
      state.args += args;
      // A custom tool's input is known once its arguments are whole (response.custom_tool_call_input.done).
      if (this.origins?.get(state.name)?.custom !== true) out += this.event('response.function_call_arguments.delta', { item_id: state.id, output_index: state.index, delta: args });
    }
    return out;
  }

  private closeAll(status: ItemStatus): string {
    let out = '';
    for (const item of this.items) {
      if (item.status !== 'in_progress') continue;
      out += item.kind === 'message' ? this.closeMessage(item, status) : item.kind === 'reasoning' ? this.closeReasoning(item, status) : this.closeCall(item, status);
    }
    return out;
  }

  private closeMessage(message: MessageState, status: ItemStatus): string {
    if (this.message === message) this.message = null;
    message.status = status;
    let out = '';
    const { id, index } = message;
    message.parts.forEach((part, i) => {
      out +=
        part.type === 'output_text'
          ? this.event('response.output_text.done', { item_id: id, output_index: index, content_index: i, text: part.text, logprobs: [] })
          : this.event('response.refusal.done', { item_id: id, output_index: index, content_index: i, refusal: part.text });
      out += this.event('response.content_part.done', { item_id: id, output_index: index, content_index: i, part: contentPartObject(part) });
    });
    return out + this.event('response.output_item.done', { output_index: index, item: messageItem(id, status, message.parts) });
  }

  private closeCall(call: CallState, status: ItemStatus): string {
    call.status = status;
    const item = this.callItem(call, call.args, status);
    const done =
      item.type === 'custom_tool_call'
        ? this.event('response.custom_tool_call_input.delta', { item_id: call.id, output_index: call.index, delta: item.input }) +
          this.event('response.custom_tool_call_input.done', { item_id: call.id, output_index: call.index, input: item.input })
        : this.event('response.function_call_arguments.done', { item_id: call.id, output_index: call.index, name: item.name, arguments: call.args });
    return done + this.event('response.output_item.done', { output_index: call.index, item });
  }

  private callItem(call: CallState, args: string, status: ItemStatus): Record<string, unknown> {
    return toolCallItem(call.id, call.callId, call.name, args, status, this.origins);
  }

  /** The billed counts (the adapter's), with the reasoning tokens the usage chunk reported. */
  private usage(meta: StreamMeta): TokenCounts | null {
    const billed = meta.usage;
    if (billed === null) return this.counts;
    return { input: billed.input, output: billed.output, cached: billed.cached ?? this.counts?.cached ?? 0, cacheWrite: billed.cacheWrite ?? this.counts?.cacheWrite ?? 0, reasoning: this.counts?.reasoning ?? 0 };
  }

  private snapshot(state: { status: ResponseState['status']; incompleteDetails?: Outcome['incompleteDetails']; error?: FailedError; usage?: TokenCounts | null }): Record<string, unknown> {
    // Items still open when a response fails were cut short.
    const open: ItemStatus = state.status === 'in_progress' ? 'in_progress' : 'incomplete';
    const output = this.items.map((item) => {
      const status = item.status === 'in_progress' ? open : item.status;
      if (item.kind === 'reasoning') return reasoningItem(item.id, status, this.summary && item.text !== '' ? item.text : null, item.blocks);
      return item.kind === 'message' ? messageItem(item.id, status, item.parts) : this.callItem(item, item.args, status);
    });
    return responseObject({ id: this.id, createdAt: this.createdAt, model: this.model, output, usage: null, ...state }, this.echo);
  }

  private event(type: string, body: Record<string, unknown>): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.sequence++, ...body })}\n\n`;
  }
}
