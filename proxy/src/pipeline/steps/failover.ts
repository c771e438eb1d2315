import { performance } from 'node:perf_hooks';
import { Errors, GatewayError } from '@gateway/shared';
import type { Cancel } from '../../providers/cancel.js';
import type { ProxyMetrics } from '../../metrics.js';
import type { Target } from '../../routing/model-router.js';

/**
 * Tries a route's targets in order until one answers, for every request path that calls a
 * provider. A retryable failure (connection refused or reset, connect or header timeout, 429,
 * 5xx, 529) moves on to the next target; nothing has reached the client by then, since an answer
 * (or a stream) starts only once a provider accepted the request, and is never retried after.
 * Each attempt is written to the call's record (provider, attempts, providers tried), timed, and
 * reported to the target's health (routing/target-health.ts) and the metrics.
 */
export interface AttemptLog {
  /** The provider of the current (finally: the last) attempt. */
  provider: string | null;
  attempts: number;
  readonly tried: string[];
  readonly finished: boolean;
}

export type Served<R> =
  | { ok: true; result: R; target: Target }
  /** `counted`: the failure is already in the upstream error metric. */
  | { ok: false; error: unknown; counted: boolean };

export async function tryTargets<R>(plan: readonly Target[], cancel: Cancel, log: AttemptLog, metrics: ProxyMetrics, attempt: (target: Target) => Promise<R>): Promise<Served<R>> {
  // Made only when needed: an Error captures a stack trace, a cost no answered request should pay.
  let last: Served<R> | null = null;
  for (let i = 0; i < plan.length; i++) {
    const target = plan[i]!;
    const provider = target.adapter.name;
    log.provider = provider;
    log.attempts++;
    log.tried.push(provider);
    const sentAt = performance.now();
    let result: R;
    try {
      result = await attempt(target);
      metrics.perRequest.upstream(provider, (performance.now() - sentAt) / 1000);
    } catch (err) {
      if (log.finished || cancel.aborted || !(err instanceof GatewayError) || !err.retryable) {
        // A refusal is an answer: the provider is up. A cancelled call says nothing of it.
        if (err instanceof GatewayError && !err.retryable && !cancel.aborted) target.health.succeeded();
        else target.health.released();
        return { ok: false, error: err, counted: false };
      }
      target.health.failed(Date.now(), (err.retryAfter ?? 0) * 1000, err.code);
      metrics.upstreamErrors.inc({ provider, code: err.code });
      last = { ok: false, error: err, counted: true };
      if (i === plan.length - 1) break;
      metrics.retries.inc({ provider });
      continue;
    }
    target.health.succeeded();
    return { ok: true, result, target };
  }
  return last ?? { ok: false, error: Errors.noProviderTried(), counted: false };
}
