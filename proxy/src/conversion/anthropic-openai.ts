import type { ErrorCode, FinishReason } from '@gateway/shared';
import type { Usage } from '../providers/adapter.js';
import type { AnthropicUsage } from '../providers/anthropic/anthropic-types.js';
import { toCount as count } from '../providers/stream-inspector.js';

/**
 * Anthropic Messages ⇄ OpenAI Chat Completions (and the gateway's own records): stop reasons,
 * token usage and error classes, both ways, in one place. The inbound Messages API
 * (protocols/anthropic-messages/) renders OpenAI-shaped answers as Anthropic's with it; the
 * Anthropic adapter (providers/anthropic/) reads Anthropic's answers into OpenAI's with it.
 * Neither side keeps a table of its own (agentgateway's `conversion/` is the model).
 */

// ---- stop reasons ----

/** Anthropic's stop_reason as OpenAI's finish_reason (what the client sees) and the gateway's FinishReason (what is recorded). */
export interface MappedFinish {
  openai: 'stop' | 'length' | 'tool_calls' | 'content_filter';
  gateway: FinishReason;
  /** The provider's stop_reason when it maps to none of the gateway's reasons. */
  raw: string | null;
}

const FROM_ANTHROPIC = new Map<string, Omit<MappedFinish, 'raw'>>([
  ['end_turn', { openai: 'stop', gateway: 'stop' }],
  ['stop_sequence', { openai: 'stop', gateway: 'stop' }],
  ['max_tokens', { openai: 'length', gateway: 'max_tokens' }],
  // The answer stopped because the context window filled up: cut by a token limit all the same.
  ['model_context_window_exceeded', { openai: 'length', gateway: 'max_tokens' }],
  ['tool_use', { openai: 'tool_calls', gateway: 'tool_calls' }],
  ['refusal', { openai: 'content_filter', gateway: 'content_filter' }],
]);

/**
 * Anthropic → OpenAI. A reason this table does not know (pause_turn, or one added later) reads as
 * `stop`, with the provider's own word kept as `raw` for the record.
 */
export function mapStopReason(stopReason: string | null | undefined): MappedFinish {
  if (stopReason === null || stopReason === undefined) return { openai: 'stop', gateway: 'stop', raw: null };
  const known = FROM_ANTHROPIC.get(stopReason);
  if (known !== undefined) return { ...known, raw: null };
  return { openai: 'stop', gateway: 'stop', raw: stopReason };
}

export type StopReason = 'end_turn' | 'max_tokens' | 'tool_use' | 'refusal';

/**
 * The gateway's finish reason → Anthropic's stop_reason. A stop at one of `stop_sequences` is
 * `end_turn` too: OpenAI-shaped answers say `stop` for both a natural end and a stop sequence,
 * and the text is cut before the sequence, so nothing tells them apart.
 */
export function stopReason(finish: FinishReason | null): StopReason {
  switch (finish) {
    case 'max_tokens':
      return 'max_tokens';
    case 'tool_calls':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

// ---- usage ----

/**
 * Anthropic counts the prompt in three parts (`input_tokens` excludes what was read from or
 * written to the prompt cache); OpenAI's prompt_tokens is the whole prompt, with the part read
 * from the cache as cached_tokens. The gateway bills the whole prompt, the cached part apart.
 */
export function usageFrom(usage: AnthropicUsage | null | undefined): Usage {
  const read = count(usage?.cache_read_input_tokens);
  const written = count(usage?.cache_creation_input_tokens);
  const input = count(usage?.input_tokens) + read + written;
  return written === 0 ? { input, output: count(usage?.output_tokens), cached: read } : { input, output: count(usage?.output_tokens), cached: read, cacheWrite: written };
}

/** Counts present in a later stream event replace earlier ones: Anthropic's are cumulative. */
export function mergeUsage(into: AnthropicUsage, usage: AnthropicUsage | null | undefined): void {
  if (usage === undefined || usage === null) return;
  for (const field of ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'] as const) {
    const value = usage[field];
    if (typeof value === 'number') into[field] = value;
  }
}

export interface OpenAiUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
}

/** The gateway's counts as OpenAI's `usage`. */
export function openAiUsage(usage: Usage): OpenAiUsage {
  return {
    prompt_tokens: usage.input,
    completion_tokens: usage.output,
    total_tokens: usage.input + usage.output,
    prompt_tokens_details: { cached_tokens: usage.cached ?? 0 },
  };
}

/** Anthropic's `usage` as the Messages API reports it. */
export interface MessagesUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

/** The gateway's counts (cached tokens included in the input) as Anthropic's (cached apart). */
export function anthropicUsage(usage: Usage): MessagesUsage {
  const cached = Math.min(usage.cached ?? 0, usage.input);
  return { input_tokens: usage.input - cached, output_tokens: usage.output, cache_read_input_tokens: cached, cache_creation_input_tokens: 0 };
}

// ---- errors ----

/**
 * The gateway's error codes as Anthropic's error types. UNAVAILABLE stays 503 (with Retry-After)
 * rather than Anthropic's 529: it is the gateway that cannot serve (keys unverifiable, draining, a
 * provider's queue full), the status is the one every endpoint and the audit trail use, and the
 * SDKs retry both alike.
 */
const ANTHROPIC_TYPE: Record<ErrorCode, string> = {
  INVALID_REQUEST: 'invalid_request_error',
  UNAUTHORIZED: 'authentication_error',
  FORBIDDEN: 'permission_error',
  MODEL_NOT_ALLOWED: 'permission_error',
  MCP_NOT_ALLOWED: 'permission_error',
  MODEL_NOT_PRICED: 'permission_error',
  TOOL_NOT_ALLOWED: 'permission_error',
  GUARDRAIL_BLOCKED: 'invalid_request_error',
  UNSUPPORTED_PARAMETER: 'invalid_request_error',
  NOT_FOUND: 'not_found_error',
  MODEL_NOT_FOUND: 'not_found_error',
  METHOD_NOT_ALLOWED: 'invalid_request_error',
  CONFLICT: 'invalid_request_error',
  PAYLOAD_TOO_LARGE: 'request_too_large',
  UNSUPPORTED_MEDIA_TYPE: 'invalid_request_error',
  QUOTA_EXCEEDED: 'rate_limit_error',
  BUDGET_EXCEEDED: 'rate_limit_error',
  RATE_LIMITED: 'rate_limit_error',
  INTERNAL: 'api_error',
  UPSTREAM_ERROR: 'api_error',
  UNAVAILABLE: 'overloaded_error',
  GUARDRAIL_UNAVAILABLE: 'api_error',
  UPSTREAM_TIMEOUT: 'api_error',
};

export function anthropicErrorType(code: ErrorCode): string {
  return ANTHROPIC_TYPE[code];
}

/** The HTTP status Anthropic documents for each error type (an error event inside a stream has none). */
const STATUS_OF_TYPE = new Map<string, number>([
  ['invalid_request_error', 400],
  ['authentication_error', 401],
  ['billing_error', 402],
  ['permission_error', 403],
  ['not_found_error', 404],
  ['request_too_large', 413],
  ['rate_limit_error', 429],
  ['api_error', 500],
  ['timeout_error', 504],
  ['overloaded_error', 529],
]);

export function statusOfAnthropicError(type: unknown): number | undefined {
  return typeof type === 'string' ? STATUS_OF_TYPE.get(type) : undefined;
}
