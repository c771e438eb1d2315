import { performance } from 'node:perf_hooks';
import { GatewayError, type FinishReason, type GatewayEndpoint, type KeyRecord, type ModelPrice } from '@gateway/shared';
import type { ChatRequest, CompletionResult, StreamMeta, StreamResult, Usage } from '../providers/adapter.js';
import type { Route } from '../routing/model-router.js';
import { Cancel } from '../providers/cancel.js';
import { estimatePromptTokens } from '../policy/token-estimate.js';
import type { InboundProtocol, ParsedRequest, StreamWriter } from '../protocols/protocol.js';
import { GatewayCall, type GatewayDeps, type RequestInfo, type UsageOutcome } from './gateway-call.js';
import type { Exchange } from '../http/exchange.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** HTTP status recorded for a request whose client left before any answer (nginx's convention). */
export const CLIENT_CLOSED = 499;

/**
 * A model request in any inbound protocol (chat completions, messages, responses): body → the
 * protocol's parse into the internal request → policy → route → provider, answered whole or
 * streamed event by event with backpressure in the protocol's own format, and cut at once when
 * the client leaves or the key dies.
 */
export class InferenceCall extends GatewayCall {
  private phase: 'reading' | 'running' | 'done' = 'reading';
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

  /** The client went away: stop the provider too. */
  clientGone(): void {
    if (this.phase === 'reading') {
      this.phase = 'done';
      this.finish('cancelled', CLIENT_CLOSED, null);
      return;
    }
    this.cancel?.abort();
  }

  tooLarge(): void {
    const known = this.knownNow;
    if (known !== null) this.key = known;
    else this.identify();
    this.phase = 'done';
    this.fail(new GatewayError('PAYLOAD_TOO_LARGE', `The body is larger than ${this.deps.config.maxBodyBytes} bytes.`), 'error');
  }

  async onBody(raw: Buffer): Promise<void> {
    if (!(await this.admitted())) return;
    this.phase = 'running';
    if (!this.info.jsonBody) {
      return this.fail(new GatewayError('UNSUPPORTED_MEDIA_TYPE', 'The body must be JSON: send content-type: application/json.'), 'error');
    }

    let json: unknown;
    try {
      json = JSON.parse(utf8.decode(raw));
    } catch (err) {
      const message = err instanceof SyntaxError ? 'The body is not valid JSON.' : 'The body is not valid UTF-8.';
      return this.fail(new GatewayError('INVALID_REQUEST', message, { param: 'body' }), 'error');
    }
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
    });
  }

  /**
   * Tries the route's targets in order until one answers. A retryable failure (connection
   * refused or reset, connect or header timeout, 429, 5xx, 529) moves on to the next target; no
   * byte has reached the client by then, since a stream is started only once a provider accepted
   * the request, and is never retried after.
   */
  private async serve(route: Route, base: ChatRequest): Promise<void> {
    const cancel = this.cancel as Cancel;
    const plan = route.plan(Date.now());
    for (let i = 0; i < plan.length; i++) {
      const target = plan[i]!;
      const request = target.entry.upstream === base.model ? base : { ...base, upstreamModel: target.entry.upstream };
      this.request = request;
      this.provider = target.adapter.name;
      this.price = target.entry.price;
      this.attempts++;
      this.tried.push(target.adapter.name);
      this.trace?.attempt(target.adapter, request);
      let result: CompletionResult | StreamResult;
      const sentAt = performance.now();
      try {
        result = base.stream ? await target.adapter.stream(request, cancel) : await target.adapter.complete(request, cancel);
        this.deps.metrics.upstreamLatency.observe({ provider: target.adapter.name }, (performance.now() - sentAt) / 1000);
      } catch (err) {
        this.trace?.attemptFailed(err);
        if (this.finished || cancel.aborted || !(err instanceof GatewayError) || !err.retryable) {
          if (err instanceof GatewayError && !err.retryable && !cancel.aborted) target.health.succeeded();
          else target.health.released();
          return this.upstreamFailed(err);
        }
        target.health.failed(Date.now(), (err.retryAfter ?? 0) * 1000);
        this.deps.metrics.upstreamErrors.inc({ provider: target.adapter.name, code: err.code });
        if (i === plan.length - 1) return this.upstreamFailed(err, false);
        this.deps.metrics.retries.inc({ provider: target.adapter.name });
        continue;
      }
      target.health.succeeded();
      this.trace?.answered(result);
      if ('events' in result) return this.streamOut(result);
      return this.completeOnce(result);
    }
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
    if (policy.allowed_models !== null && !policy.allowed_models.includes(parsed.model)) {
      this.fail(new GatewayError('MODEL_NOT_ALLOWED', `The model \`${parsed.model}\` is not allowed for this project.`, { param: 'model' }), 'policy_blocked');
      return null;
    }
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
    const estimate = estimatePromptTokens(body) + (maxTokens ?? this.deps.defaultReservation);
    const now = Date.now();
    const rate = this.deps.rateLimiter.check(policy, key.id, estimate, now);
    if (rate !== null) {
      const refused = rate instanceof Promise ? await rate : rate;
      if (this.finished) return null;
      if (refused !== null) {
        this.fail(refused, refused.code === 'RATE_LIMITED' ? 'policy_blocked' : 'error');
        return null;
      }
    }
    const reserved = this.deps.quotas.reserve(policy, estimate, now);
    const reservation = reserved instanceof Promise ? await reserved : reserved;
    if (reservation instanceof GatewayError) {
      this.fail(reservation, reservation.code === 'QUOTA_EXCEEDED' ? 'policy_blocked' : 'error');
      return null;
    }
    if (this.finished) {
      // Revoked or abandoned while the lease was taken: nothing was used.
      this.deps.quotas.settle(reservation, 0);
      return null;
    }
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
    const writer = this.protocol.streamWriter(this.parsed as ParsedRequest, this.info.requestId);
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
      input: counted?.input ?? estimatePromptTokens(this.request.body),
      output: counted?.output ?? this.meta?.estimatedOutput ?? 0,
      cached: counted?.cached ?? 0,
      finishReason,
      rawFinishReason,
      stream: this.request.stream,
      price: this.price,
    };
  }
}
