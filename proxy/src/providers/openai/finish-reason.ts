import type { FinishReason } from '@gateway/shared';

/**
 * OpenAI's finish reasons as the gateway's. `function_call` is the deprecated form of `tool_calls`.
 * Any other value (a provider's own, or one OpenAI adds later) counts as `stop` and is kept as the
 * raw reason, so that the record shows what the provider said.
 */
const KNOWN: Readonly<Record<string, FinishReason>> = {
  stop: 'stop',
  length: 'max_tokens',
  tool_calls: 'tool_calls',
  function_call: 'tool_calls',
  content_filter: 'content_filter',
};

export function mapFinishReason(raw: string | null): { finishReason: FinishReason; rawFinishReason?: string } {
  if (raw === null) return { finishReason: 'stop' };
  const known = Object.hasOwn(KNOWN, raw) ? KNOWN[raw] : undefined;
  return known === undefined ? { finishReason: 'stop', rawFinishReason: raw } : { finishReason: known };
}
