import type { FinishReason } from '@gateway/shared';

/**
 * Gemini's `finishReason` as the OpenAI name the client sees and the gateway's own. Gemini says
 * STOP after function calls too, so an answer holding calls finishes `tool_calls`, as OpenAI's
 * does. A reason with no equivalent (OTHER, MALFORMED_FUNCTION_CALL, LANGUAGE, one added later…)
 * is `stop` with the raw value kept for the record.
 */
export interface Finish {
  openai: 'stop' | 'length' | 'tool_calls' | 'content_filter';
  gateway: FinishReason;
  raw: string | null;
}

const FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION']);

export function mapFinishReason(reason: string | undefined, hasToolCalls: boolean): Finish {
  if (reason === 'MAX_TOKENS') return { openai: 'length', gateway: 'max_tokens', raw: null };
  if (reason !== undefined && FILTERED.has(reason)) return { openai: 'content_filter', gateway: 'content_filter', raw: null };
  const raw = reason === 'STOP' ? null : (reason ?? null);
  if (hasToolCalls) return { openai: 'tool_calls', gateway: 'tool_calls', raw };
  return { openai: 'stop', gateway: 'stop', raw };
}

/** A prompt Gemini blocked (`promptFeedback.blockReason`, no candidates) is answered as filtered. */
export const BLOCKED: Finish = { openai: 'content_filter', gateway: 'content_filter', raw: null };
