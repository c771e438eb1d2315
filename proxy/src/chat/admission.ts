import { GatewayError, type AuditOutcome, type ProjectPolicy } from '@gateway/shared';
import type { QuotaLeases, Reservation } from '../policy/quota-leases.js';
import type { RateLimiter } from '../policy/rate-limiter.js';

/**
 * The project policy's say on a model request, shared by every request path that calls a
 * provider (inference-call.ts, embeddings-call.ts): the model allow-list, then the rate limits and
 * the quota, both charged the request's token estimate. A refusal is answered through the call
 * (its audit outcome `policy_blocked`, or `error` when Redis could not tell); the path-specific
 * checks (a chat request's max_tokens cap) go between the two steps.
 */
export interface AdmittedCall {
  readonly finished: boolean;
  fail(err: GatewayError, outcome: AuditOutcome): void;
}

export interface AdmissionDeps {
  rateLimiter: RateLimiter;
  quotas: QuotaLeases;
}

/** Whether the project may use `model`; answers 403 MODEL_NOT_ALLOWED through the call if not. */
export function modelAllowed(call: AdmittedCall, policy: ProjectPolicy, model: string): boolean {
  if (policy.allowed_models === null || policy.allowed_models.includes(model)) return true;
  call.fail(new GatewayError('MODEL_NOT_ALLOWED', `The model \`${model}\` is not allowed for this project.`, { param: 'model' }), 'policy_blocked');
  return false;
}

/**
 * Rate limits, then the quota reservation of `estimate` tokens (settled to the true count when the
 * request finishes). Returns the reservation, or null when the request was refused and answered,
 * or ended meanwhile (revoked, abandoned: the lease is then given back unused).
 */
export async function admit(call: AdmittedCall, deps: AdmissionDeps, policy: ProjectPolicy, keyId: string, estimate: number): Promise<Reservation | null> {
  const now = Date.now();
  const rate = deps.rateLimiter.check(policy, keyId, estimate, now);
  if (rate !== null) {
    const refused = rate instanceof Promise ? await rate : rate;
    if (call.finished) return null;
    if (refused !== null) {
      call.fail(refused, refused.code === 'RATE_LIMITED' ? 'policy_blocked' : 'error');
      return null;
    }
  }
  const reserved = deps.quotas.reserve(policy, estimate, now);
  const reservation = reserved instanceof Promise ? await reserved : reserved;
  if (reservation instanceof GatewayError) {
    call.fail(reservation, reservation.code === 'QUOTA_EXCEEDED' ? 'policy_blocked' : 'error');
    return null;
  }
  if (call.finished) {
    // Revoked or abandoned while the lease was taken: nothing was used.
    deps.quotas.settle(reservation, 0);
    return null;
  }
  return reservation;
}
