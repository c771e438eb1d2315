import { Errors, GatewayError } from '@gateway/shared';
import { Cancel } from '../../providers/cancel.js';
import { providerTextOf } from '../../providers/upstream-error.js';
import type { ChatRequest, CompletionResult, EmbeddingsBody, EmbeddingsRequest, StreamResult, EmbeddingsResult, NativeRequest } from '../../request/internal-request.js';
import type { ParsedRequest } from '../../protocols/protocol.js';
import { upstreamOf, type Route, type Target } from '../../routing/model-router.js';
import type { RequestContext } from '../context.js';
import { NAME } from '../../http/wire-bytes.js';
import { CLIENT_CLOSED } from '../exits.js';
import { tryTargets, type Served } from './failover.js';
import { jsonBytes } from '../../request/json-bytes.js';

/**
 * route + failover + provider: the route's plan (its providers in order, cooling ones last), each
 * tried in turn until one answers (failover.ts), each attempt traced with its own span and its
 * trace context sent to the provider. The one step of a model request that always waits.
 */

/** A chat model request (chat completions, messages, responses): complete or stream. */
export function callModel(ctx: RequestContext): Promise<void> {
  const cancel = startCancel(ctx);
  const base = chatRequestOf(ctx);
  return attempt<CompletionResult | StreamResult>(ctx, cancel, (target) => {
    const request = forTarget(ctx, base, target);
    begin(ctx, target, request);
    const sent = base.stream ? target.adapter.stream(request, cancel) : target.adapter.complete(request, cancel);
    // Dispatched: undici writes it to a reused connection in the check phase that follows (docs/benchmarks.md#breakdown).
    ctx.clock?.mark('provider.sent');
    return sent;
  });
}

/** The request every target of the route is sent, before its provider's name for the model. */
export function chatRequestOf(ctx: RequestContext): ChatRequest {
  const parsed = ctx.parsed as ParsedRequest;
  // A translated (or capped) request has no client bytes to forward as they are.
  const raw = ctx.forward ?? jsonBytes(parsed.chat);
  return {
    body: parsed.chat,
    raw,
    model: parsed.model,
    upstreamModel: parsed.model,
    stream: parsed.stream,
    clientWantsUsage: parsed.wantsUsage,
    requestId: ctx.info.requestId,
    ...(parsed.native === undefined ? {} : { native: withClientParts(parsed.native, ctx) }),
  };
}

/** The model served (an alias's, model-served step), under this provider's name for it. */
export function forTarget(ctx: RequestContext, base: ChatRequest, target: Target): ChatRequest {
  const upstream = upstreamOf(target.entry, ctx.model ?? base.model);
  return upstream === base.model ? base : { ...base, upstreamModel: upstream };
}

/** A native request carries the client's provider headers and query string (RequestInfo). */
function withClientParts(native: NativeRequest, ctx: RequestContext): NativeRequest {
  const { providerHeaders, query } = ctx.info;
  return providerHeaders === null && query === '' ? native : { ...native, headers: providerHeaders, query };
}

/** An embeddings request, over the model's providers that have embeddings. */
export function callEmbeddings(ctx: RequestContext): Promise<void> {
  const cancel = startCancel(ctx);
  const body = ctx.embeddings as EmbeddingsBody;
  const base: EmbeddingsRequest = { body, raw: ctx.raw as Buffer, model: body.model, upstreamModel: body.model, requestId: ctx.info.requestId };
  return attempt<EmbeddingsResult>(ctx, cancel, (target) => {
    const upstream = upstreamOf(target.entry, ctx.model ?? base.model);
    const request = upstream === base.model ? base : { ...base, upstreamModel: upstream };
    begin(ctx, target, request);
    // Never thrown: the route holds only providers with embeddings (ModelRouter.embeddingsRoute).
    if (target.adapter.embed === undefined) throw Errors.adapterHasNoEmbeddings(target.adapter.name);
    return target.adapter.embed(request, cancel);
  });
}

export function startCancel(ctx: RequestContext): Cancel {
  const cancel = (ctx.cancel = new Cancel());
  if (ctx.ex.aborted) cancel.abort();
  return cancel;
}

export function begin(ctx: RequestContext, target: Target, request: ChatRequest | EmbeddingsRequest): void {
  ctx.request = request;
  const dropped = ctx.dropped;
  if (dropped !== null) {
    ctx.ex.setHeader(NAME.droppedParams, dropped.get(target) ?? null);
  }
  ctx.price = target.entry.price;
  ctx.trace?.attempt(target.adapter, request);
}

function attempt<R extends CompletionResult | StreamResult | EmbeddingsResult>(ctx: RequestContext, cancel: Cancel, send: (target: Target) => Promise<R>): Promise<void> {
  const trace = ctx.trace;
  const call =
    trace === null
      ? send
      : (target: Target) =>
          send(target).catch((err: unknown) => {
            trace.attemptFailed(err);
            throw err;
          });
  const route = ctx.route as Route;
  // A continued native response goes where it lives, whatever its health (the state step checked the route has it).
  const plan = ctx.pinnedProvider === null ? route.plan(Date.now(), Math.random, ctx) : route.targets.filter((target) => target.adapter.name === ctx.pinnedProvider);
  return tryTargets(plan, cancel, ctx, ctx.deps.metrics, call).then((served: Served<R>) => {
    ctx.clock?.mark('provider.answered');
    if (!served.ok) return upstreamFailed(ctx, served.error, !served.counted);
    ctx.result = served.result;
    ctx.trace?.answered(served.result);
  });
}

/**
 * The provider failed (every target, or a stream after its start). Before the first byte the
 * provider produced nothing to bill; after it, what streamed counts.
 */
export function upstreamFailed(ctx: RequestContext, err: unknown, count = true): void {
  if (ctx.finished) return;
  const { ex } = ctx;
  const meter = ctx.chain.meter!;
  if (ex.aborted) return ctx.finish('cancelled', ex.headersSent ? 200 : CLIENT_CLOSED, null, meter(ctx, 'cancelled'));
  const gatewayError = err instanceof GatewayError ? err : Errors.providerFailed(ctx.provider ?? '', err);
  if (count) ctx.deps.metrics.upstreamErrors.inc({ provider: ctx.provider ?? 'none', code: gatewayError.code });
  logProviderWords(ctx, gatewayError);
  ctx.fail(gatewayError, 'error', ex.headersSent ? meter(ctx, 'error') : meter(ctx, 'error', NOTHING));
}

const NOTHING = { input: 0, output: 0 } as const;

/**
 * The operator's line of a request failed by what a provider said, in the provider's own words:
 * credentials removed, cloud identifiers kept (the client's message has placeholders for them,
 * providers/error-scrub.ts). Provider faults (access denied included) at warn.
 */
function logProviderWords(ctx: RequestContext, err: GatewayError): void {
  const said = providerTextOf(err);
  if (said === null) return;
  const fields = { request_id: ctx.info.requestId, provider: ctx.provider, code: err.code, status: err.status, provider_message: said };
  // A client's own mistakes and rate limits come in floods and are answered in full: debug.
  if (err.status < 500) ctx.deps.log.debug(fields, 'provider refused the request');
  else ctx.deps.log.warn(fields, 'provider failed the request');
}
