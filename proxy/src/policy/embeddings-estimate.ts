import type { EmbeddingsInput } from '../request/internal-request.js';
import { estimateTextTokens } from './token-estimate.js';

/**
 * The prompt tokens an embeddings request may be billed, before it is forwarded: its quota
 * reservation, its rate-limit charge, and its count when a provider reports none (Gemini). Texts
 * are weighed as chat text is (token-estimate.ts: never below the o200k/cl100k count); token ids
 * are counted exactly. An embeddings request has no output.
 */
export function estimateEmbeddingsTokens(input: EmbeddingsInput): number {
  if (typeof input === 'string') return estimateTextTokens(input);
  let tokens = 0;
  for (const item of input) {
    if (typeof item === 'string') tokens += estimateTextTokens(item);
    else if (typeof item === 'number') tokens += 1;
    else tokens += item.length;
  }
  return tokens;
}
