import type { ModelPrice, CacheEntry } from '@gateway/shared';
import type { InboundProtocol, ParsedRequest } from '../protocols/protocol.js';
import { anthropicMessages } from '../protocols/anthropic-messages/anthropic-messages.js';
import { openAiChat } from '../protocols/openai-chat/openai-chat.js';
import { openAiResponses } from '../protocols/openai-responses/openai-responses.js';
import { toChatCompletion } from '../conversion/chat-anthropic/anthropic-response.js';
import type { AnthropicResponse } from '../providers/anthropic/anthropic-types.js';
import type { CompletionResult, StreamMeta } from '../request/internal-request.js';
import type { RequestContext } from '../pipeline/context.js';
import { CLIENT_CLOSED } from '../pipeline/exits.js';
import type { UsageOutcome } from '../pipeline/request-records.js';
import { NAME, valueBytes } from '../http/wire-bytes.js';
import { completionChunks, type StoredCompletion } from './completion-chunks.js';

/**
 * A hit answered from its entry, in the endpoint's own format, through the protocols' renderers:
 * JSON as `render` makes it, a stream as the protocol's stream writer makes it from the stored
 * answer's chunks (a streamed miss serves a JSON hit and the reverse). Recorded as a hit: no
 * tokens, no cost, `saved_usd` the provider call's cost.
 */
const PROTOCOLS: Record<string, InboundProtocol> = {
  'chat.completions': openAiChat,
  messages: anthropicMessages,
  responses: openAiResponses,
};

const HIT = [NAME.gatewayCache, valueBytes('hit')] as const;

/** A hit costs nothing: its usage record's tokens are 0 and priced at this. */
const FREE: ModelPrice = Object.freeze({ input: 0, output: 0, cached_input: 0, cache_write: 0 }) as ModelPrice;

export function replay(ctx: RequestContext, entry: CacheEntry, now: number): void | Promise<void> {
  const { ex } = ctx;
  ctx.provider = entry.provider;
  const stream = ctx.parsed?.stream === true;
  const usage: UsageOutcome = { input: 0, output: 0, cached: 0, cacheWrite: 0, finishReason: entry.finish_reason, rawFinishReason: entry.raw_finish_reason, stream, price: FREE };
  ex.extraHeaders = [HIT, [NAME.age, String(Math.max(0, Math.floor((now - entry.created_at) / 1000)))]];
  // The client left while the entry was read: recorded as a hit that delivered nothing.
  if (ex.aborted) return ctx.finish('cancelled', CLIENT_CLOSED, null, { ...usage, finishReason: 'cancelled' });
  if (entry.kind === 'embeddings') {
    ex.send(200, 'application/json', entry.body);
    return ctx.finish('success', 200, null, usage);
  }
  const protocol = PROTOCOLS[ctx.endpoint as string] as InboundProtocol;
  const parsed = ctx.parsed as ParsedRequest;
  if (!stream) {
    const result: CompletionResult = { status: 200, body: entry.body, native: entry.kind === 'anthropic-message', usage: entry.usage, finishReason: entry.finish_reason, rawFinishReason: entry.raw_finish_reason };
    ex.send(200, 'application/json', protocol.render(result, parsed));
    return ctx.finish('success', 200, null, usage);
  }
  return streamOut(ctx, protocol, parsed, entry, usage);
}

async function streamOut(ctx: RequestContext, protocol: InboundProtocol, parsed: ParsedRequest, entry: CacheEntry, usage: UsageOutcome): Promise<void> {
  const { ex } = ctx;
  const completion = (
    entry.kind === 'anthropic-message' ? toChatCompletion(JSON.parse(entry.body.toString('utf8')) as AnthropicResponse, parsed.model, entry.created_at).body : JSON.parse(entry.body.toString('utf8'))
  ) as StoredCompletion;
  const meta: StreamMeta = { usage: entry.usage, estimatedOutput: entry.usage.output, finishReason: entry.finish_reason, rawFinishReason: entry.raw_finish_reason, failed: false };
  ctx.meta = meta;
  const writer = protocol.streamWriter(parsed, ctx.info.requestId, false);
  ctx.writer = writer;
  ex.startStream();
  const opening = writer.start();
  if (opening !== '') ex.write(opening);
  for (const data of completionChunks(completion, parsed.wantsUsage)) {
    // Revoked (the stream already carries the error) or the client left.
    if (ctx.finished || ex.aborted) break;
    const text = writer.chunk(data);
    if (text !== '' && !ex.write(text)) await ex.drain();
  }
  if (ctx.finished) return;
  if (ex.aborted) return ctx.finish('cancelled', CLIENT_CLOSED, null, { ...usage, finishReason: 'cancelled' });
  ex.endStream(writer.end(meta));
  ctx.finish('success', 200, null, usage);
}
