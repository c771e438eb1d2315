import type { CompletionResult, EmbeddingsResult, StreamResult } from '../../request/internal-request.js';
import type { InboundProtocol, ParsedRequest } from '../../protocols/protocol.js';
import type { ProjectPolicy } from '@gateway/shared';
import type { RequestContext } from '../context.js';
import type { Step } from '../endpoint.js';
import { CLIENT_CLOSED } from '../exits.js';
import { upstreamFailed } from './provider.js';

/**
 * respond: the answer in the endpoint's protocol, whole (sent synchronously from the provider's
 * answer) or streamed event by event with backpressure, then `finish` (the closing steps). A
 * client gone meanwhile is recorded as cancelled, with what the provider used.
 */

/** A chat model answer in `protocol`'s format; made once per endpoint. */
export function respondWith(protocol: InboundProtocol): Step {
  // Named, as every step is, for the step clock's breakdown (step-clock.ts).
  return function respond(ctx) {
    const result = ctx.result as CompletionResult | StreamResult;
    if ('events' in result) return streamOut(ctx, protocol, result);
    return completeOnce(ctx, protocol, result);
  };
}

/**
 * An answer sent whole: a success, unless an output guardrail withheld it, which the audit counts
 * a policy block as it does a refused prompt (the client still gets its 200 and content_filter).
 */
function answeredOutcome(ctx: RequestContext): 'success' | 'policy_blocked' {
  const decisions = ctx.extras?.guardrails;
  if (decisions === null || decisions === undefined) return 'success';
  return decisions.some((d) => d.stage === 'output' && d.action === 'block') ? 'policy_blocked' : 'success';
}

function completeOnce(ctx: RequestContext, protocol: InboundProtocol, result: CompletionResult): void | Promise<void> {
  const meter = ctx.chain.meter!;
  if (ctx.ex.aborted) return ctx.finish('cancelled', CLIENT_CLOSED, null, meter(ctx, 'cancelled', result.usage));
  const body = protocol.render(result, ctx.parsed as ParsedRequest);
  const remember = ctx.keepNative;
  if (result.native === true && remember !== null && result.responseId !== undefined) {
    // Remembered before it is sent, as a kept Response is: a follow-up naming it always finds it.
    return remember(result.responseId).then(() => {
      if (ctx.finished) return;
      if (ctx.ex.aborted) return ctx.finish('cancelled', CLIENT_CLOSED, null, meter(ctx, 'cancelled', result.usage));
      sendWhole(ctx, result, body);
    });
  }
  // A kept Response is stored before it is sent: a follow-up naming it always finds it.
  const keep = ctx.keepAnswer;
  if (keep === null) return sendWhole(ctx, result, body);
  return keep(JSON.parse(body.toString('utf8')) as Record<string, unknown>).then(() => {
    if (ctx.finished) return;
    if (ctx.ex.aborted) return ctx.finish('cancelled', CLIENT_CLOSED, null, meter(ctx, 'cancelled', result.usage));
    sendWhole(ctx, result, body);
  });
}

function sendWhole(ctx: RequestContext, result: CompletionResult, body: Buffer): void {
  ctx.ex.send(200, 'application/json', body);
  ctx.finish(answeredOutcome(ctx), 200, null, ctx.chain.meter!(ctx, result.finishReason, result.usage, result.rawFinishReason ?? null));
}

async function streamOut(ctx: RequestContext, protocol: InboundProtocol, result: StreamResult): Promise<void> {
  const { ex } = ctx;
  const meter = ctx.chain.meter!;
  ctx.meta = result.meta;
  const writer = protocol.streamWriter(ctx.parsed as ParsedRequest, ctx.info.requestId, result.native === true);
  ctx.writer = writer;
  ex.startStream();
  const opening = writer.start();
  if (opening !== '') ex.write(opening);
  let remember = result.native === true ? ctx.keepNative : null;
  try {
    for await (const data of result.events) {
      if (ctx.finished || ex.aborted) break;
      if (remember !== null && result.meta.responseId !== undefined) {
        // The frame that told the id (the stream's last) waits until the id is remembered.
        await remember(result.meta.responseId);
        remember = null;
        if (ctx.finished || ex.aborted) break;
      }
      const text = writer.chunk(data);
      if (text !== '' && !ex.write(text)) await ex.drain();
    }
  } catch (err) {
    return upstreamFailed(ctx, err);
  }
  if (ctx.finished) return;
  if (ex.aborted) {
    ctx.cancel?.abort();
    return ctx.finish('cancelled', CLIENT_CLOSED, null, meter(ctx, 'cancelled'));
  }
  const tail = writer.end(result.meta);
  const final = ctx.keepAnswer === null ? null : (writer.final?.() ?? null);
  if (final !== null) {
    // Stored before the stream's last event: a follow-up naming it always finds it.
    await (ctx.keepAnswer as (response: Record<string, unknown>) => Promise<void>)(final);
    if (ctx.finished) return;
    if (ex.aborted) return ctx.finish('cancelled', CLIENT_CLOSED, null, meter(ctx, 'cancelled'));
  }
  ex.endStream(tail);
  ctx.finish(answeredOutcome(ctx), 200, null, meter(ctx, result.meta.finishReason ?? 'stop', undefined, result.meta.rawFinishReason ?? null));
}

/** OpenAI's embeddings answer, as the adapter made it. */
export function respondEmbeddings(ctx: RequestContext): void {
  const result = ctx.result as EmbeddingsResult;
  const meter = ctx.chain.meter!;
  const usage = { input: result.usage.input, output: 0 };
  if (ctx.ex.aborted) return ctx.finish('cancelled', CLIENT_CLOSED, null, meter(ctx, 'cancelled', usage));
  ctx.ex.send(200, 'application/json', result.body);
  ctx.finish('success', 200, null, meter(ctx, 'stop', usage));
}

/** `{"input_tokens": n}`: the gateway's estimate, the figure its quota would reserve. */
export function respondTokenCount(ctx: RequestContext): void {
  if (ctx.ex.aborted) return ctx.finish('cancelled', CLIENT_CLOSED, null);
  ctx.ex.send(200, 'application/json', JSON.stringify({ input_tokens: ctx.estimate }));
  ctx.finish('success', 200, null);
}

/** The models this key's project may use. */
export function respondModels(ctx: RequestContext): void {
  if (ctx.ex.aborted) return ctx.finish('cancelled', CLIENT_CLOSED, null);
  ctx.ex.send(200, 'application/json', ctx.deps.router.modelsListFor((ctx.policy as ProjectPolicy).allowed_models));
  ctx.finish('success', 200, null);
}
