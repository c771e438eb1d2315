import { GatewayError, type FinishReason, type GatewayEndpoint, type KeyRecord, type ModelPrice } from '@gateway/shared';
import type { ChatRequest, CompletionResult, StreamMeta, StreamResult, Usage } from '../providers/adapter.js';
import type { Route } from '../routing/model-router.js';
import { Cancel } from '../providers/cancel.js';
import { estimatePromptTokens } from '../policy/token-estimate.js';
import type { InboundProtocol, ParsedRequest, StreamWriter } from '../protocols/protocol.js';
import { admit, modelAllowed } from './admission.js';
import { tryTargets } from './failover.js';
import { GatewayCall, type GatewayDeps, type RequestInfo, type UsageOutcome } from './gateway-call.js';
import { CLIENT_CLOSED, ModelCall } from './model-call.js';
import type { Exchange } from '../http/exchange.js';

export { CLIENT_CLOSED };

/**
 * A model request in any inbound protocol (chat completions, messages, responses): body → the
 * protocol's parse into the internal request → policy → route → provider, answered whole or
 * streamed event by event with backpressure in the protocol's own format, and cut at once when
 * the client leaves or the key dies.
 */
export class InferenceCall extends ModelCall {
  private request: ChatRequest | null = null;
  private parsed: ParsedRequest | null = null;
  private meta: StreamMeta | null = null;
  /** The price of the model at the provider tried last (the one that served, if one did). */
  private price: ModelPrice | null = null;
  private writer: StreamWriter | null = null;

  constructor(
    deps: GatewayDeps,
    ex: Exchange,
    info: RequestInfo,
    private readonly protocol: InboundProtocol,
  ) {
    super(deps, ex, info, protocol);
  }

  override get endpoint(): GatewayEndpoint {
    return this.protocol.endpoint;
  }

  protected async run(json: unknown, raw: Buffer): Promise<void> {
    let route: Route;
    let parsed: ParsedRequest;
    try {
      parsed = this.protocol.parse(json, raw);
      this.model = parsed.model;
      route = this.deps.router.route(parsed.model);
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err;
      return this.fail(err, 'error');
    }
    this.parsed = parsed;
    const forward = await this.applyPolicy(parsed);
    if (forward === null) return;
    this.cancel = new Cancel();
    if (this.ex.aborted) this.cancel.abort();
    await this.serve(route, {
      body: parsed.chat,
      raw: forward,
      model: parsed.model,
      upstreamModel: parsed.model,
      stream: parsed.stream,
      clientWantsUsage: parsed.wantsUsage,
      requestId: this.info.requestId,
      ...(parsed.native === undefined ? {} : { native: parsed.native }),
    });
  }

  /** The route's targets in turn (failover.ts), then the answer, whole or streamed. */
  private async serve(route: Route, base: ChatRequest): Promise<void> {
    const cancel = this.cancel as Cancel;
    const served = await tryTargets<CompletionResult | StreamResult>(route.plan(Date.now(), Math.random, this), cancel, this, this.deps.metrics, (target) => {
      const request = target.entry.upstream === base.model ? base : { ...base, upstreamModel: target.entry.upstream };
      this.request = request;
      this.price = target.entry.price;
      this.trace?.attempt(target.adapter, request);
      const call = base.stream ? target.adapter.stream(request, cancel) : target.adapter.complete(request, cancel);
      if (this.trace === null) return call;
      return call.catch((err: unknown) => {
        this.trace?.attemptFailed(err);
        throw err;
      });
    });
    if (!served.ok) return this.upstreamFailed(served.error, !served.counted);
    const result = served.result;
    this.trace?.answered(result);
    if ('events' in result) return this.streamOut(result);
    return this.completeOnce(result);
  }

  /**
   * The project's model policy, rate limits and quota, in that order. Returns the body to forward
   * (with max_tokens added when the project caps it and the request set none), or null when the
   * request was refused and answered.
   */
  private async applyPolicy(parsed: ParsedRequest): Promise<Buffer | null> {
    const key = this.key as KeyRecord;
    const body = parsed.chat;
    const policy = await this.projectPolicy();
    if (policy === null) return null;
    if (!modelAllowed(this, policy, parsed.model)) return null;
    let forward = parsed.raw;
    let maxTokens = parsed.maxTokens;
    const cap = policy.max_tokens_cap;
    if (cap !== null) {
      if (maxTokens !== null && maxTokens > cap) {
        this.fail(new GatewayError('INVALID_REQUEST', `max_tokens may be at most ${cap} for this project.`, { param: 'max_tokens' }), 'policy_blocked');
        return null;
      }
      if (maxTokens === null) {
        body.max_tokens = cap;
        forward = null;
        maxTokens = cap;
      }
    }
    // Made once: the reservation, a stream's opening usage and a usage record without the
    // provider's counts all read it.
    parsed.promptTokens = estimatePromptTokens(body);
    const estimate = parsed.promptTokens + (maxTokens ?? this.deps.defaultReservation);
    const reservation = await admit(this, this.deps, policy, key.id, estimate);
    if (reservation === null) return null;
    this.reservation = reservation;
    // A translated (or capped) request has no client bytes to forward as they are.
    return forward ?? Buffer.from(JSON.stringify(body));
  }

  private completeOnce(result: CompletionResult): void {
    if (this.finished) return;
    if (this.ex.aborted) return this.finish('cancelled', CLIENT_CLOSED, null, this.usage('cancelled', result.usage));
    this.ex.send(200, 'application/json', this.protocol.render(result, this.parsed as ParsedRequest));
    this.finish('success', 200, null, this.usage(result.finishReason, result.usage, result.rawFinishReason ?? null));
  }

  private async streamOut(result: StreamResult): Promise<void> {
    this.meta = result.meta;
    if (this.finished) return;
    const writer = this.protocol.streamWriter(this.parsed as ParsedRequest, this.info.requestId, result.native === true);
    this.writer = writer;
    this.ex.startStream();
    const opening = writer.start();
    if (opening !== '') this.ex.write(opening);
    try {
      for await (const data of result.events) {
        if (this.finished || this.ex.aborted) break;
        const text = writer.chunk(data);
        if (text !== '' && !this.ex.write(text)) await this.ex.drain();
      }
    } catch (err) {
      return this.upstreamFailed(err);
    }
    if (this.finished) return;
    if (this.ex.aborted) {
      this.cancel?.abort();
      return this.finish('cancelled', CLIENT_CLOSED, null, this.usage('cancelled'));
    }
    this.ex.endStream(writer.end(result.meta));
    this.finish('success', 200, null, this.usage(result.meta.finishReason ?? 'stop', undefined, result.meta.rawFinishReason ?? null));
  }

  private upstreamFailed(err: unknown, count = true): void {
    if (this.finished) return;
    if (this.ex.aborted) return this.finish('cancelled', this.ex.headersSent ? 200 : CLIENT_CLOSED, null, this.usage('cancelled'));
    const gatewayError = err instanceof GatewayError ? err : new GatewayError('UPSTREAM_ERROR', `Provider ${this.provider ?? ''} failed.`, { cause: err });
    if (count) this.deps.metrics.upstreamErrors.inc({ provider: this.provider ?? 'none', code: gatewayError.code });
    // Before the first byte the provider produced nothing to bill; after it, what streamed counts.
    this.fail(gatewayError, 'error', this.ex.headersSent ? this.usage('error') : this.usage('error', { input: 0, output: 0 }));
  }

  protected override streamErrorText(err: GatewayError): string {
    return this.writer?.error?.(err) ?? super.streamErrorText(err);
  }

  revoke(reason: GatewayError = GatewayCall.keyDeleted()): void {
    if (this.finished) return;
    this.revoked = true;
    if (reason.code === 'UNAUTHORIZED') this.deps.metrics.revocations.inc();
    const usage = this.request !== null ? this.usage('cancelled') : undefined;
    this.cancel?.abort();
    this.fail(reason, reason.code === 'UNAUTHORIZED' ? 'auth_failed' : 'error', usage);
  }

  /** Provider counts when known; otherwise what was seen so far, estimated. */
  private usage(finishReason: FinishReason, known?: Usage, rawFinishReason: string | null = null): UsageOutcome | undefined {
    if (this.request === null) return undefined;
    const counted = known ?? this.meta?.usage ?? null;
    return {
      input: counted?.input ?? this.parsed?.promptTokens ?? estimatePromptTokens(this.request.body),
      output: counted?.output ?? this.meta?.estimatedOutput ?? 0,
      cached: counted?.cached ?? 0,
      finishReason,
      rawFinishReason,
      stream: this.request.stream,
      price: this.price,
    };
  }
}
