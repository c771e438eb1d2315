import type { FinishReason } from '@gateway/shared';

/**
 * Anthropic's stop_reason as OpenAI's finish_reason (what the client sees) and the gateway's
 * FinishReason (what is recorded). A reason this table does not know (pause_turn, or one added
 * later) reads as `stop`, with the provider's own word kept as `raw` for the record.
 */
export interface MappedFinish {
  openai: 'stop' | 'length' | 'tool_calls' | 'content_filter';
  gateway: FinishReason;
  /** The provider's stop_reason when it maps to none of the gateway's reasons. */
  raw: string | null;
}

const KNOWN = new Map<string, Omit<MappedFinish, 'raw'>>([
  ['end_turn', { openai: 'stop', gateway: 'stop' }],
  ['stop_sequence', { openai: 'stop', gateway: 'stop' }],
  ['max_tokens', { openai: 'length', gateway: 'max_tokens' }],
  // The answer stopped because the context window filled up: cut by a token limit all the same.
  ['model_context_window_exceeded', { openai: 'length', gateway: 'max_tokens' }],
  ['tool_use', { openai: 'tool_calls', gateway: 'tool_calls' }],
  ['refusal', { openai: 'content_filter', gateway: 'content_filter' }],
]);

export function mapStopReason(stopReason: string | null | undefined): MappedFinish {
  if (stopReason === null || stopReason === undefined) return { openai: 'stop', gateway: 'stop', raw: null };
  const known = KNOWN.get(stopReason);
  if (known !== undefined) return { ...known, raw: null };
  return { openai: 'stop', gateway: 'stop', raw: stopReason };
}
