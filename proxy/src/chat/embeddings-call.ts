import { GatewayError, type GatewayEndpoint, type KeyRecord, type ModelPrice } from '@gateway/shared';
import type { EmbeddingsBody, EmbeddingsRequest, EmbeddingsResult } from '../providers/adapter.js';
import { Cancel } from '../providers/cancel.js';
import { estimateEmbeddingsTokens } from '../policy/embeddings-estimate.js';
import { openAiChat } from '../protocols/openai-chat/openai-chat.js';
import { validateEmbeddingsRequest } from '../protocols/openai-embeddings/validate-embeddings.js';
import type { Route } from '../routing/model-router.js';
import type { Exchange } from '../http/exchange.js';
import { admit, modelAllowed } from './admission.js';
import { tryTargets } from './failover.js';
import { GatewayCall, type GatewayDeps, type RequestInfo, type UsageOutcome } from './gateway-call.js';
import { CLIENT_CLOSED, ModelCall } from './model-call.js';

/**
 * POST /v1/embeddings (OpenAI's embeddings API), on the same path as a chat request: key, body,
 * validation, the project's allow-list, rate limits and quota (reserved at the input estimate,
 * settled to the provider's count), failover over the model's providers that have embeddings,
 * revocation in flight, one audit event and, once a provider was called, one usage record
 * (output 0, cost at the model's input price). Errors are in OpenAI's shape.
 */
export class EmbeddingsCall extends ModelCall {
  private request: EmbeddingsRequest | null = null;
  /** The price of the model at the provider tried last (the one that served, if one did). */
  private price: ModelPrice | null = null;

  constructor(deps: GatewayDeps, ex: Exchange, info: RequestInfo) {
    super(deps, ex, info, openAiChat);
  }

  override get endpoint(): GatewayEndpoint {
    return 'embeddings';
  }

  protected async run(json: unknown, raw: Buffer): Promise<void> {
    let body: EmbeddingsBody;
    let route: Route;
    try {
      body = validateEmbeddingsRequest(json);
      this.model = body.model;
      route = this.deps.router.embeddingsRoute(body.model);
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err;
      return this.fail(err, 'error');
    }
    if (!(await this.applyPolicy(body))) return;
    const cancel = (this.cancel = new Cancel());
    if (this.ex.aborted) cancel.abort();
    const base: EmbeddingsRequest = { body, raw, model: body.model, upstreamModel: body.model, requestId: this.info.requestId };
    const served = await tryTargets(route.plan(Date.now(), Math.random, this), cancel, this, this.deps.metrics, (target) => {
      const request = target.entry.upstream === base.model ? base : { ...base, upstreamModel: target.entry.upstream };
      this.request = request;
      this.price = target.entry.price;
      // Never thrown: the route holds only providers with embeddings (ModelRouter.embeddingsRoute).
      if (target.adapter.embed === undefined) throw new GatewayError('INTERNAL', `Provider ${target.adapter.name} has no embeddings.`);
      return target.adapter.embed(request, cancel);
    });
    if (!served.ok) return this.upstreamFailed(served.error, !served.counted);
    this.answer(served.result);
  }

  /** The allow-list, then rate limits and quota charged the input estimate; false when refused. */
  private async applyPolicy(body: EmbeddingsBody): Promise<boolean> {
    const policy = await this.projectPolicy();
    if (policy === null) return false;
    if (!modelAllowed(this, policy, body.model)) return false;
    const reservation = await admit(this, this.deps, policy, (this.key as KeyRecord).id, estimateEmbeddingsTokens(body.input));
    if (reservation === null) return false;
    this.reservation = reservation;
    return true;
  }

  private answer(result: EmbeddingsResult): void {
    if (this.finished) return;
    if (this.ex.aborted) return this.finish('cancelled', CLIENT_CLOSED, null, this.usage('cancelled', result.usage.input));
    this.ex.send(200, 'application/json', result.body);
    this.finish('success', 200, null, this.usage('stop', result.usage.input));
  }

  private upstreamFailed(err: unknown, count = true): void {
    if (this.finished) return;
    if (this.ex.aborted) return this.finish('cancelled', CLIENT_CLOSED, null, this.usage('cancelled'));
    const gatewayError = err instanceof GatewayError ? err : new GatewayError('UPSTREAM_ERROR', `Provider ${this.provider ?? ''} failed.`, { cause: err });
    if (count) this.deps.metrics.upstreamErrors.inc({ provider: this.provider ?? 'none', code: gatewayError.code });
    // A failed provider produced nothing to bill.
    this.fail(gatewayError, 'error', this.usage('error', 0));
  }

  revoke(reason: GatewayError = GatewayCall.keyDeleted()): void {
    if (this.finished) return;
    this.revoked = true;
    if (reason.code === 'UNAUTHORIZED') this.deps.metrics.revocations.inc();
    const usage = this.usage('cancelled');
    this.cancel?.abort();
    this.fail(reason, reason.code === 'UNAUTHORIZED' ? 'auth_failed' : 'error', usage);
  }

  /**
   * The provider's prompt count when known; otherwise (cut short) the input estimate, as a
   * provider that was sent the request may bill it. Undefined before any provider was called.
   */
  private usage(finishReason: 'stop' | 'cancelled' | 'error', input?: number): UsageOutcome | undefined {
    if (this.request === null) return undefined;
    return {
      input: input ?? estimateEmbeddingsTokens(this.request.body.input),
      output: 0,
      cached: 0,
      finishReason,
      rawFinishReason: null,
      stream: false,
      price: this.price,
    };
  }
}
