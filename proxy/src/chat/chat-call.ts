import { GatewayError, SSE_DONE, sseData, type FinishReason, type KeyRecord } from '@gateway/shared';
import type { ChatRequest, ProviderAdapter, StreamMeta } from '../providers/adapter.js';
import { Cancel } from '../providers/cancel.js';
import { estimatePromptTokens } from '../policy/token-estimate.js';
import { GatewayCall, type UsageOutcome } from './gateway-call.js';
import { validateChatRequest, type ValidChatRequest } from './validate-request.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** HTTP status recorded for a request whose client left before any answer (nginx's convention). */
export const CLIENT_CLOSED = 499;

/**
 * POST /v1/chat/completions: body → validation → route → provider, answered whole or streamed
 * event by event with backpressure, and cut at once when the client leaves or the key dies.
 */
export class ChatCall extends GatewayCall {
  private phase: 'reading' | 'running' | 'done' = 'reading';
  private request: ChatRequest | null = null;
  private meta: StreamMeta | null = null;

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

    let parsed: unknown;
    try {
      parsed = JSON.parse(utf8.decode(raw));
    } catch (err) {
      const message = err instanceof SyntaxError ? 'The body is not valid JSON.' : 'The body is not valid UTF-8.';
      return this.fail(new GatewayError('INVALID_REQUEST', message, { param: 'body' }), 'error');
    }
    let adapter: ProviderAdapter;
    let valid: ValidChatRequest;
    try {
      valid = validateChatRequest(parsed);
      this.model = valid.model;
      adapter = this.deps.router.route(valid.model);
    } catch (err) {
      return this.fail(err as GatewayError, 'error');
    }
    const body = parsed as Record<string, unknown>;
    const admitted = await this.applyPolicy(body, raw, valid);
    if (admitted === null) return;
    this.provider = adapter.name;
    this.request = {
      body,
      raw: admitted,
      model: valid.model,
      stream: valid.stream,
      clientWantsUsage: valid.clientWantsUsage,
      requestId: this.info.requestId,
    };
    this.cancel = new Cancel();
    if (this.ex.aborted) this.cancel.abort();
    if (this.request.stream) await this.streamOut(adapter, this.request, this.cancel);
    else await this.completeOnce(adapter, this.request, this.cancel);
  }

  /**
   * The project's model policy, rate limits and quota, in that order. Returns the body to forward
   * (with max_tokens added when the project caps it and the request set none), or null when the
   * request was refused and answered.
   */
  private async applyPolicy(body: Record<string, unknown>, raw: Buffer, valid: ValidChatRequest): Promise<Buffer | null> {
    const key = this.key as KeyRecord;
    const policy = await this.projectPolicy();
    if (policy === null) return null;
    if (policy.allowed_models !== null && !policy.allowed_models.includes(valid.model)) {
      this.fail(new GatewayError('MODEL_NOT_ALLOWED', `The model \`${valid.model}\` is not allowed for this project.`, { param: 'model' }), 'policy_blocked');
      return null;
    }
    let forward = raw;
    let maxTokens = valid.maxTokens;
    const cap = policy.max_tokens_cap;
    if (cap !== null) {
      if (maxTokens !== null && maxTokens > cap) {
        this.fail(new GatewayError('INVALID_REQUEST', `max_tokens may be at most ${cap} for this project.`, { param: 'max_tokens' }), 'policy_blocked');
        return null;
      }
      if (maxTokens === null) {
        body.max_tokens = cap;
        forward = Buffer.from(JSON.stringify(body));
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
    return forward;
  }

  private async completeOnce(adapter: ProviderAdapter, request: ChatRequest, cancel: Cancel): Promise<void> {
    let result;
    try {
      result = await adapter.complete(request, cancel);
    } catch (err) {
      return this.upstreamFailed(err);
    }
    if (this.finished) return;
    if (this.ex.aborted) return this.finish('cancelled', CLIENT_CLOSED, null, this.usage('cancelled', result.usage));
    this.ex.send(200, 'application/json', result.body);
    this.finish('success', 200, null, this.usage(result.finishReason, result.usage));
  }

  private async streamOut(adapter: ProviderAdapter, request: ChatRequest, cancel: Cancel): Promise<void> {
    let result;
    try {
      result = await adapter.stream(request, cancel);
    } catch (err) {
      return this.upstreamFailed(err);
    }
    this.meta = result.meta;
    if (this.finished) return;
    this.ex.startStream();
    try {
      for await (const data of result.events) {
        if (this.finished || this.ex.aborted) break;
        if (!this.ex.write(sseData(data))) await this.ex.drain();
      }
    } catch (err) {
      return this.upstreamFailed(err);
    }
    if (this.finished) return;
    if (this.ex.aborted) {
      this.cancel?.abort();
      return this.finish('cancelled', CLIENT_CLOSED, null, this.usage('cancelled'));
    }
    this.ex.endStream(SSE_DONE);
    this.finish('success', 200, null, this.usage(result.meta.finishReason ?? 'stop'));
  }

  private upstreamFailed(err: unknown): void {
    if (this.finished) return;
    if (this.ex.aborted) return this.finish('cancelled', this.ex.headersSent ? 200 : CLIENT_CLOSED, null, this.usage('cancelled'));
    const gatewayError = err instanceof GatewayError ? err : new GatewayError('UPSTREAM_ERROR', `Provider ${this.provider ?? ''} failed.`, { cause: err });
    this.deps.metrics.upstreamErrors.inc({ provider: this.provider ?? 'none', code: gatewayError.code });
    // Before the first byte the provider produced nothing to bill; after it, what streamed counts.
    this.fail(gatewayError, 'error', this.ex.headersSent ? this.usage('error') : this.usage('error', { input: 0, output: 0 }));
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
  private usage(finishReason: FinishReason, known?: { input: number; output: number }): UsageOutcome | undefined {
    if (this.request === null) return undefined;
    const counted = known ?? this.meta?.usage ?? null;
    return {
      input: counted?.input ?? estimatePromptTokens(this.request.body),
      output: counted?.output ?? this.meta?.estimatedOutput ?? 0,
      finishReason,
      stream: this.request.stream,
    };
  }
}

