import type { FinishReason } from '@gateway/shared';
import type { Usage } from '../../providers/adapter.js';
import { toCount } from '../../providers/stream-inspector.js';
import type { BedrockUsage } from '../../providers/bedrock/bedrock-wire.js';

/**
 * Converse counts the prompt in three parts (`inputTokens` leaves out what was read from or
 * written to the prompt cache); the gateway's `input` is the whole prompt, with the part read from
 * the cache as `cached` (priced as cached input) and the part written as `cacheWrite`.
 */
export function usageFrom(usage: BedrockUsage | null | undefined): Usage {
  const read = toCount(usage?.cacheReadInputTokens);
  const write = toCount(usage?.cacheWriteInputTokens);
  return { input: toCount(usage?.inputTokens) + read + write, output: toCount(usage?.outputTokens), cached: read, cacheWrite: write };
}

export function openAiUsage(usage: Usage): Record<string, unknown> {
  return {
    prompt_tokens: usage.input,
    completion_tokens: usage.output,
    total_tokens: usage.input + usage.output,
    prompt_tokens_details: { cached_tokens: usage.cached ?? 0 },
  };
}

/**
 * Converse's stopReason as OpenAI's finish_reason and the gateway's FinishReason. A reason this
 * table does not know reads as `stop`, the provider's own word kept for the record.
 */
export interface MappedFinish {
  openai: 'stop' | 'length' | 'tool_calls' | 'content_filter';
  gateway: FinishReason;
  raw: string | null;
}

const KNOWN = new Map<string, Omit<MappedFinish, 'raw'>>([
  ['end_turn', { openai: 'stop', gateway: 'stop' }],
  ['stop_sequence', { openai: 'stop', gateway: 'stop' }],
  ['max_tokens', { openai: 'length', gateway: 'max_tokens' }],
  ['model_context_window_exceeded', { openai: 'length', gateway: 'max_tokens' }],
  ['tool_use', { openai: 'tool_calls', gateway: 'tool_calls' }],
  ['guardrail_intervened', { openai: 'content_filter', gateway: 'content_filter' }],
  ['content_filtered', { openai: 'content_filter', gateway: 'content_filter' }],
]);

export function mapStopReason(stopReason: unknown): MappedFinish {
  if (typeof stopReason !== 'string') return { openai: 'stop', gateway: 'stop', raw: null };
  const known = KNOWN.get(stopReason);
  return known === undefined ? { openai: 'stop', gateway: 'stop', raw: stopReason } : { ...known, raw: null };
}
