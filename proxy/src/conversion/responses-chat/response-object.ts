import { randomBytes } from 'node:crypto';
import type { ThinkingBlock } from '../../request/openai-chat.js';
import { encodeThinking } from '../../request/thinking-blocks.js';
import type { ToolOrigin } from './tools.js';

/**
 * The pieces of a Response object shared by the whole answer and the stream: ids, output items,
 * usage, and the status a chat finish reason gives. Every field the `openai` SDK types as required
 * is present; the request's settings are echoed as OpenAI does.
 */
export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

/** `resp_…`, `msg_…`, `fc_…`, `call_…`, `rs_…`: OpenAI's prefixes, 192 random bits each. */
export function newId(prefix: 'resp' | 'msg' | 'fc' | 'call' | 'rs'): string {
  return `${prefix}_${randomBytes(24).toString('hex')}`;
}

/** A response id as the gateway makes them and the control plane keeps them (`resp_…`). */
const RESPONSE_ID = /^resp_[A-Za-z0-9_-]{1,200}$/;

export function isResponseId(id: string): boolean {
  return RESPONSE_ID.test(id);
}

export type ContentPart = { type: 'output_text'; text: string } | { type: 'refusal'; text: string };

export function contentPartObject(part: ContentPart): Record<string, unknown> {
  return part.type === 'output_text' ? { type: 'output_text', annotations: [], logprobs: [], text: part.text } : { type: 'refusal', refusal: part.text };
}

export function messageItem(id: string, status: ItemStatus, parts: readonly ContentPart[]): Record<string, unknown> {
  return { type: 'message', id, status, role: 'assistant', content: parts.map(contentPartObject) };
}

/**
 * A model's reasoning as a `reasoning` item: its text as the summary when the request asked for one
 * (`reasoning.summary`), and the provider's thinking blocks, when it gave some, as
 * `encrypted_content`, which a client sends back for the provider to see its reasoning again
 * (request/thinking-blocks.ts). It is written whether `include` asked for it or not: without it a
 * stateless client's next turn of a tool loop could not go back to the provider with thinking on.
 */
export function reasoningItem(id: string, status: ItemStatus, summary: string | null, blocks: readonly ThinkingBlock[] | null): Record<string, unknown> {
  const item: Record<string, unknown> = { type: 'reasoning', id, summary: summary === null || summary === '' ? [] : [{ type: 'summary_text', text: summary }], status };
  if (blocks !== null && blocks.length > 0) item.encrypted_content = encodeThinking(blocks);
  return item;
}

/** The request asked for a reasoning summary (the echoed `reasoning.summary`). */
export function summaryWanted(echo: Readonly<Record<string, unknown>>): boolean {
  const reasoning = echo.reasoning as { summary?: unknown } | null | undefined;
  return typeof reasoning?.summary === 'string';
}

export function functionCallItem(id: string, callId: string, name: string, args: string, status: ItemStatus): Record<string, unknown> {
  return { type: 'function_call', id, call_id: callId, name, arguments: args, status };
}

/**
 * A chat tool call as the item of the tool the client declared (tools.ts): a function call, in
 * its namespace when it had one, or a custom tool call whose input is the call's `input` argument.
 */
export function toolCallItem(id: string, callId: string, chatName: string, args: string, status: ItemStatus, origins: ReadonlyMap<string, ToolOrigin> | undefined): Record<string, unknown> {
  const origin = origins?.get(chatName);
  if (origin === undefined) return functionCallItem(id, callId, chatName, args, status);
  const namespace = origin.namespace === undefined ? {} : { namespace: origin.namespace };
  if (origin.custom) return { type: 'custom_tool_call', id, call_id: callId, name: origin.name, input: customInput(args), status, ...namespace };
  return { type: 'function_call', id, call_id: callId, name: origin.name, ...namespace, arguments: args, status };
}

/** A custom tool's input from the arguments of the function that stood for it; the arguments as they are when they hold none. */
export function customInput(args: string): string {
  if (args === '') return '';
  try {
    const parsed: unknown = JSON.parse(args);
    if (typeof parsed === 'object' && parsed !== null && typeof (parsed as { input?: unknown }).input === 'string') return (parsed as { input: string }).input;
  } catch {
    // Not JSON: the model wrote the input itself.
  }
  return args;
}

export interface TokenCounts {
  input: number;
  output: number;
  cached: number;
  /** Prompt tokens written to the provider's prompt cache (0 when it reports none). */
  cacheWrite: number;
  reasoning: number;
}

/** Token counts from a Chat Completions `usage` object, or null when it holds none. */
export function countsFromChatUsage(usage: unknown): TokenCounts | null {
  if (typeof usage !== 'object' || usage === null) return null;
  const u = usage as {
    prompt_tokens?: unknown;
    completion_tokens?: unknown;
    prompt_tokens_details?: { cached_tokens?: unknown; cache_write_tokens?: unknown } | null;
    completion_tokens_details?: { reasoning_tokens?: unknown } | null;
  };
  return {
    input: count(u.prompt_tokens),
    output: count(u.completion_tokens),
    cached: count(u.prompt_tokens_details?.cached_tokens),
    cacheWrite: count(u.prompt_tokens_details?.cache_write_tokens),
    reasoning: count(u.completion_tokens_details?.reasoning_tokens),
  };
}

export function usageObject(counts: TokenCounts | null): Record<string, unknown> | null {
  if (counts === null) return null;
  return {
    input_tokens: counts.input,
    // Both required by OpenAI's ResponseUsage schema.
    input_tokens_details: { cached_tokens: Math.min(counts.cached, counts.input), cache_write_tokens: Math.min(counts.cacheWrite, counts.input) },
    output_tokens: counts.output,
    output_tokens_details: { reasoning_tokens: Math.min(counts.reasoning, counts.output) },
    total_tokens: counts.input + counts.output,
  };
}

export interface Outcome {
  status: 'completed' | 'incomplete';
  incompleteDetails: { reason: 'max_output_tokens' | 'content_filter' } | null;
}

/** A chat finish reason (the provider's `length`, or the gateway's `max_tokens`) as a Response status. */
export function outcomeOf(finishReason: string | null | undefined): Outcome {
  if (finishReason === 'length' || finishReason === 'max_tokens') return { status: 'incomplete', incompleteDetails: { reason: 'max_output_tokens' } };
  if (finishReason === 'content_filter') return { status: 'incomplete', incompleteDetails: { reason: 'content_filter' } };
  return { status: 'completed', incompleteDetails: null };
}

/**
 * A failed Response's `error`. OpenAI's ResponseError schema closes `code` over its own enum
 * (ResponseErrorCode): the gateway's code is mapped into it (a rate or quota refusal is
 * `rate_limit_exceeded`, anything else `server_error`) and kept whole as `gateway_code`, which the
 * schema allows beside it. The `error` event before `response.failed` carries the gateway's code
 * as its own `code` (a free string there).
 */
export interface FailedError {
  code: 'server_error' | 'rate_limit_exceeded';
  message: string;
  gateway_code: string;
}

export function failedError(err: { code: string; message: string }): FailedError {
  const code = err.code === 'RATE_LIMITED' || err.code === 'QUOTA_EXCEEDED' ? 'rate_limit_exceeded' : 'server_error';
  return { code, message: err.message, gateway_code: err.code };
}

export interface ResponseState {
  id: string;
  createdAt: number;
  status: 'in_progress' | 'completed' | 'incomplete' | 'failed';
  model: string;
  output: Record<string, unknown>[];
  incompleteDetails?: Outcome['incompleteDetails'];
  error?: FailedError | null;
  usage: TokenCounts | null;
}

export function responseObject(state: ResponseState, echo: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const finished = state.status === 'completed' || state.status === 'incomplete';
  return {
    id: state.id,
    object: 'response',
    created_at: state.createdAt,
    status: state.status,
    background: false,
    completed_at: finished ? Math.floor(Date.now() / 1000) : null,
    error: state.error ?? null,
    incomplete_details: state.incompleteDetails ?? null,
    ...echo,
    model: state.model,
    output: state.output,
    usage: usageObject(state.usage),
  };
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.floor(value) : 0;
}
