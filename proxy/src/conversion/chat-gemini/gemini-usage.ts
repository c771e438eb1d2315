import type { Usage } from '../../providers/adapter.js';
import { toCount } from '../../providers/stream-inspector.js';
import type { GeminiUsageMetadata } from '../../providers/gemini/gemini-wire.js';

/**
 * Gemini's `usageMetadata` in OpenAI's terms. Prompt tokens include the cached ones (as
 * `promptTokenCount` does) and the prompt of any built-in tool; output tokens include the model's
 * thinking (`thoughtsTokenCount`, billed as output), also reported as reasoning tokens. The total
 * is the sum, so the three figures always agree.
 */
export interface OpenAiUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
  completion_tokens_details: { reasoning_tokens: number };
}

export function toUsage(meta: GeminiUsageMetadata | undefined): { usage: Usage; openai: OpenAiUsage } {
  const input = toCount(meta?.promptTokenCount) + toCount(meta?.toolUsePromptTokenCount);
  const thoughts = toCount(meta?.thoughtsTokenCount);
  const output = toCount(meta?.candidatesTokenCount) + thoughts;
  const cached = Math.min(input, toCount(meta?.cachedContentTokenCount));
  return {
    usage: { input, output, cached },
    openai: {
      prompt_tokens: input,
      completion_tokens: output,
      total_tokens: input + output,
      prompt_tokens_details: { cached_tokens: cached },
      completion_tokens_details: { reasoning_tokens: thoughts },
    },
  };
}
