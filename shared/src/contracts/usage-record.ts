/**
 * One per gateway request that reached a provider (DESIGN §4). `id` is the primary key in Postgres,
 * so a batch delivered twice inserts nothing twice.
 */
export type FinishReason = 'stop' | 'max_tokens' | 'tool_calls' | 'content_filter' | 'error' | 'cancelled';

export const FINISH_REASONS: readonly FinishReason[] = ['stop', 'max_tokens', 'tool_calls', 'content_filter', 'error', 'cancelled'];

export interface UsageRecord {
  id: string;
  request_id: string;
  project_id: string;
  key_id: string;
  /** Unix ms when the request completed. */
  timestamp: number;
  model: string;
  provider: string;
  tokens: { input: number; output: number; total: number };
  latency_ms: number;
  finish_reason: FinishReason;
  stream: boolean;
}

/** Maps a provider's OpenAI-style finish_reason onto the gateway's set. */
export function normaliseFinishReason(raw: string | null | undefined): FinishReason {
  switch (raw) {
    case 'stop':
    case 'end_turn':
    case 'stop_sequence':
      return 'stop';
    case 'length':
    case 'max_tokens':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
    case 'tool_use':
      return 'tool_calls';
    case 'content_filter':
      return 'content_filter';
    case null:
    case undefined:
      return 'stop';
    default:
      return 'stop';
  }
}
