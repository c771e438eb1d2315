import type { GatewayEndpoint } from './gateway-endpoint.js';

/**
 * One per gateway request that reached a provider (DESIGN §4). `id` is the primary key in Postgres,
 * so a batch delivered twice inserts nothing twice.
 *
 * The fields added with batch version 2 are optional here, and the writer stores their defaults
 * when a record leaves them out (see `StoredUsageRecord`), so a proxy that does not fill them yet
 * still writes valid batches.
 */
export type FinishReason = 'stop' | 'max_tokens' | 'tool_calls' | 'content_filter' | 'error' | 'cancelled' | 'other';

export const FINISH_REASONS: readonly FinishReason[] = ['stop', 'max_tokens', 'tool_calls', 'content_filter', 'error', 'cancelled', 'other'];

export interface UsageTokens {
  input: number;
  output: number;
  total: number;
  /** Prompt tokens read from the provider's cache; counted in `input` too. Absent: 0. */
  cached?: number;
  /** Prompt tokens written to the provider's cache (batch version 4); counted in `input` too. Absent: 0. */
  cache_write?: number;
}

/** Cost-attribution tags of a request (`x-gateway-tags` and the key's default tags). */
export type RecordTags = Record<string, string>;

/** Bounds a record's tags and end user keep to (DESIGN §7); the header allows 10 pairs, a key's defaults add theirs. */
export const MAX_RECORD_TAGS = 32;
export const MAX_TAG_KEY_LENGTH = 32;
export const MAX_TAG_VALUE_LENGTH = 64;
export const MAX_END_USER_LENGTH = 128;
/** The longest batch id a record may carry (`batch_…` / `msgbatch_…` ids are far shorter). */
export const MAX_RECORD_BATCH_ID_LENGTH = 128;

export interface UsageRecord {
  id: string;
  request_id: string;
  project_id: string;
  key_id: string;
  /** Unix ms when the request completed. */
  timestamp: number;
  model: string;
  provider: string;
  tokens: UsageTokens;
  /** US dollars for this request; null when the model has no price. Absent: null. */
  cost_usd?: number | null;
  latency_ms: number;
  finish_reason: FinishReason;
  /** The provider's own finish reason when it maps to `other`, else null. Absent: null. */
  provider_finish_reason?: string | null;
  stream: boolean;
  /** The inbound API the request came in on. Absent: `chat.completions`. */
  endpoint?: GatewayEndpoint;
  /** Cost-attribution tags (batch version 4). Absent: {}. */
  tags?: RecordTags;
  /** The client's end user (OpenAI `user`, Anthropic `metadata.user_id`; batch version 4). Absent: null. */
  end_user?: string | null;
  /** Answered from the gateway's response cache: no provider call, tokens 0, cost 0 (batch version 4). Absent: false. */
  cache_hit?: boolean;
  /** On a cache hit, what the provider call that produced the answer cost (batch version 4). Absent: null. */
  saved_usd?: number | null;
  /** The model id the client asked for, when the project's `model_aliases` served `model` instead (batch version 4). Absent: null. */
  requested_model?: string | null;
  /** The batch (`batch_…` / `msgbatch_…`) this request was a line of (batch version 6). Absent: null. */
  batch_id?: string | null;
}

/** A usage record as Postgres holds it and the management API serves it: every field present. */
export interface StoredUsageRecord
  extends Omit<UsageRecord, 'tokens' | 'cost_usd' | 'provider_finish_reason' | 'endpoint' | 'tags' | 'end_user' | 'cache_hit' | 'saved_usd' | 'requested_model' | 'batch_id'> {
  tokens: Required<UsageTokens>;
  cost_usd: number | null;
  provider_finish_reason: string | null;
  endpoint: GatewayEndpoint;
  tags: RecordTags;
  end_user: string | null;
  cache_hit: boolean;
  saved_usd: number | null;
  requested_model: string | null;
  batch_id: string | null;
}

/** Maps a provider's finish reason (OpenAI, Anthropic or Gemini spelling) onto the gateway's set. */
export function normaliseFinishReason(raw: string | null | undefined): FinishReason {
  switch (raw) {
    case 'stop':
    case 'end_turn':
    case 'stop_sequence':
    case 'STOP':
      return 'stop';
    case 'length':
    case 'max_tokens':
    case 'MAX_TOKENS':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
    case 'tool_use':
      return 'tool_calls';
    case 'content_filter':
    case 'refusal':
    case 'SAFETY':
      return 'content_filter';
    case null:
    case undefined:
      return 'stop';
    default:
      return 'other';
  }
}

/** `finish_reason` and `provider_finish_reason` of a record, from the provider's finish reason. */
export function finishReasonFields(raw: string | null | undefined): { finish_reason: FinishReason; provider_finish_reason: string | null } {
  const finish_reason = normaliseFinishReason(raw);
  return { finish_reason, provider_finish_reason: finish_reason === 'other' ? (raw as string) : null };
}
