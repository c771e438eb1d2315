import { normaliseFinishReason } from '@gateway/shared';
import type { StreamMeta } from './adapter.js';

/**
 * Reads one OpenAI-format chunk for what the gateway bills (usage, finish reason, an output
 * estimate for streams cut short) and decides whether the client sees it. Each chunk is parsed
 * once, here; what is forwarded is the provider's own text.
 */
export function newStreamMeta(): StreamMeta {
  return { usage: null, estimatedOutput: 0, finishReason: null, failed: false };
}

/** Returns the data to forward, or null to hold the chunk back (a usage chunk nobody asked for). */
export function inspectChunk(data: string, meta: StreamMeta, clientWantsUsage: boolean): string | null {
  let chunk: { choices?: unknown; error?: unknown; usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } | null };
  try {
    chunk = JSON.parse(data) as typeof chunk;
  } catch {
    return data;
  }
  if (typeof chunk !== 'object' || chunk === null) return data;
  if (chunk.error !== undefined && chunk.error !== null) {
    meta.failed = true;
    return null;
  }
  const choices = Array.isArray(chunk.choices) ? (chunk.choices as Record<string, unknown>[]) : [];
  for (const choice of choices) {
    const finish = choice.finish_reason;
    if (typeof finish === 'string') meta.finishReason = normaliseFinishReason(finish);
    const delta = choice.delta as { content?: unknown; tool_calls?: { function?: { arguments?: unknown } }[] } | undefined;
    if (delta) {
      if (typeof delta.content === 'string') meta.estimatedOutput += estimateTokens(delta.content.length);
      if (Array.isArray(delta.tool_calls)) {
        for (const call of delta.tool_calls) {
          const args = call.function?.arguments;
          if (typeof args === 'string') meta.estimatedOutput += estimateTokens(args.length);
        }
      }
    }
  }
  const usage = chunk.usage;
  if (usage && typeof usage === 'object') {
    meta.usage = { input: toCount(usage.prompt_tokens), output: toCount(usage.completion_tokens) };
    if (choices.length === 0 && !clientWantsUsage) return null;
  }
  return data;
}

/** About four characters a token for English text; only used when the provider sent no count. */
export function estimateTokens(chars: number): number {
  return chars === 0 ? 0 : Math.max(1, Math.ceil(chars / 4));
}

export function toCount(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.floor(value) : 0;
}
