import type { Usage } from '../adapter.js';
import { toCount } from '../stream-inspector.js';
import type { AnthropicUsage } from './anthropic-types.js';

/**
 * Anthropic counts the prompt in three parts (`input_tokens` excludes what was read from or
 * written to the prompt cache); OpenAI's prompt_tokens is the whole prompt, with the part read
 * from the cache as cached_tokens. The gateway bills the whole prompt, the cached part apart.
 */
export function usageFrom(usage: AnthropicUsage | null | undefined): Usage {
  const read = toCount(usage?.cache_read_input_tokens);
  const input = toCount(usage?.input_tokens) + read + toCount(usage?.cache_creation_input_tokens);
  return { input, output: toCount(usage?.output_tokens), cached: read };
}

export interface OpenAiUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
}

export function openAiUsage(usage: Usage): OpenAiUsage {
  return {
    prompt_tokens: usage.input,
    completion_tokens: usage.output,
    total_tokens: usage.input + usage.output,
    prompt_tokens_details: { cached_tokens: usage.cached ?? 0 },
  };
}
