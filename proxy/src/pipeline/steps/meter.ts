import type { FinishReason } from '@gateway/shared';
import { estimateEmbeddingsTokens } from '../../policy/embeddings-estimate.js';
import { estimatePromptTokens } from '../../policy/token-estimate.js';
import type { ChatRequest, EmbeddingsRequest, Usage } from '../../request/internal-request.js';
import type { RequestContext } from '../context.js';
import type { UsageOutcome } from '../request-records.js';

/**
 * What a request that called a provider used: the provider's counts when known; otherwise what
 * was seen so far, estimated. Undefined while no provider was called (no usage record then).
 */
export function chatUsage(ctx: RequestContext, finishReason: FinishReason, known?: Usage, rawFinishReason: string | null = null): UsageOutcome | undefined {
  const request = ctx.request as ChatRequest | null;
  if (request === null) return undefined;
  const counted = known ?? ctx.meta?.usage ?? null;
  return {
    input: counted?.input ?? ctx.parsed?.promptTokens ?? estimatePromptTokens(request.body),
    output: counted?.output ?? ctx.meta?.estimatedOutput ?? 0,
    cached: counted?.cached ?? 0,
    cacheWrite: counted?.cacheWrite ?? 0,
    finishReason,
    rawFinishReason,
    stream: request.stream,
    price: ctx.price,
  };
}

/**
 * Embeddings produce no output: the provider's prompt count when known; otherwise (cut short) the
 * input estimate, as a provider that was sent the request may bill it.
 */
export function embeddingsUsage(ctx: RequestContext, finishReason: FinishReason, known?: Usage): UsageOutcome | undefined {
  const request = ctx.request as EmbeddingsRequest | null;
  if (request === null) return undefined;
  return {
    input: known?.input ?? estimateEmbeddingsTokens(request.body.input),
    output: 0,
    cached: 0,
    cacheWrite: 0,
    finishReason,
    rawFinishReason: null,
    stream: false,
    price: ctx.price,
  };
}
