import { createSseDecoder, type CacheEntry, type CacheEntryKind } from '@gateway/shared';
import { StreamTranslator } from '../conversion/chat-anthropic/anthropic-stream.js';
import { newStreamMeta } from '../providers/stream-inspector.js';
import type { CompletionResult, EmbeddingsResult, StreamResult } from '../request/internal-request.js';
import type { RequestContext } from '../pipeline/context.js';
import { costUsd, type UsageOutcome } from '../pipeline/request-records.js';
import type { CacheCall } from './cache-call.js';
import { ChunkAssembler } from './chunk-assembler.js';
import { jsonBytes } from '../request/json-bytes.js';

/**
 * The entry a finished miss leaves, or why it leaves none. Only a complete, successful answer is
 * stored: not an error, not a stream cut short (client gone, key revoked, provider failed), not an
 * answer withheld (`content_filter`, from the provider or an output guardrail), not one over the
 * size bound, not a Response a provider stored itself. What is stored is what the client received: a stream's chunks as the respond step
 * sent them, after the output guardrails.
 */
export type Unstored = 'incomplete' | 'filtered' | 'too_large' | 'error' | 'stateful';

export function cacheEntryOf(ctx: RequestContext, call: CacheCall, maxBytes: number, now: number): CacheEntry | Unstored {
  const usage = ctx.usage;
  if (ctx.outcome !== 'success' || ctx.status !== 200 || ctx.revoked || usage === undefined || ctx.result === null || ctx.provider === null) return 'error';
  if (usage.finishReason === 'content_filter') return 'filtered';
  const result = ctx.result;
  // A provider's own Response names a response it stored (its id, for previous_response_id): an
  // answer to replay would name one that is not this request's.
  if (ctx.endpoint === 'responses' && 'native' in result && result.native === true) return 'stateful';
  let kind: CacheEntryKind;
  let body: Buffer;
  if (ctx.endpoint === 'embeddings') {
    kind = 'embeddings';
    body = (result as EmbeddingsResult).body;
  } else if ('events' in result) {
    if (call.tooLarge) return 'too_large';
    if (!call.complete || call.chunks === null || result.meta.failed) return 'incomplete';
    const assembler = result.native === true ? nativeAssembly(call.chunks, ctx) : internalAssembly(call.chunks);
    if (assembler.filtered) return 'filtered';
    kind = 'chat';
    body = jsonBytes(assembler.completion((result as StreamResult).meta.usage));
  } else {
    const whole = result as CompletionResult;
    kind = whole.native === true ? 'anthropic-message' : 'chat';
    body = whole.body;
  }
  if (body.length > maxBytes) return 'too_large';
  return {
    v: 1,
    kind,
    created_at: now,
    body,
    provider: ctx.provider,
    usage: { input: usage.input, output: usage.output, cached: usage.cached },
    finish_reason: usage.finishReason,
    raw_finish_reason: usage.rawFinishReason,
    cost_usd: costUsd(usage as UsageOutcome),
  };
}

function internalAssembly(chunks: readonly string[]): ChunkAssembler {
  const assembler = new ChunkAssembler();
  for (const data of chunks) assembler.add(data);
  return assembler;
}

/**
 * A native Anthropic stream (SSE frames as Anthropic sent them) read into internal chunks by the
 * Anthropic adapter's own translator, then assembled like any other stream.
 */
function nativeAssembly(frames: readonly string[], ctx: RequestContext): ChunkAssembler {
  const translator = new StreamTranslator(ctx.provider ?? 'anthropic', newStreamMeta(), true, ctx.info.requestId, ctx.model ?? '');
  const assembler = new ChunkAssembler();
  const out: string[] = [];
  const decoder = createSseDecoder((event) => {
    translator.push(event.data, out);
    for (const data of out) assembler.add(data);
    out.length = 0;
  });
  for (const frame of frames) decoder.feed(frame);
  return assembler;
}
