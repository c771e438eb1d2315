import { performance } from 'node:perf_hooks';
import { Errors, GatewayError, type AuditOutcome } from '@gateway/shared';
import type { RequestContext } from './context.js';
import type { UsageOutcome } from './request-records.js';

/** HTTP status recorded for a request whose client left before any answer (nginx's convention). */
export const CLIENT_CLOSED = 499;

/**
 * The ways a request ends, the same for every endpoint: answered with an error, finished (the
 * closing steps run exactly once, whichever way out), revoked, abandoned by its client, or
 * crashed on a bug. Each produces exactly one audit event and, when a provider was called, one
 * usage record (through the endpoint's closing steps).
 */

/** Answers with an error (if nothing was sent yet) and finishes. */
export function fail(ctx: RequestContext, err: GatewayError, outcome: AuditOutcome, usage?: UsageOutcome): void {
  if (ctx.finished) return;
  const { ex } = ctx;
  if (ex.headersSent) {
    // Mid-stream: the protocol's error event and no end marker, so the client knows the answer is cut.
    ex.write(ctx.writer?.error?.(err) ?? ctx.chain.errors.streamError(err));
    ex.endStream();
    finish(ctx, outcome, 200, err.code, usage);
    return;
  }
  const closeConnection = err.code === 'PAYLOAD_TOO_LARGE' || ctx.deps.state.draining;
  ex.send(err.status, 'application/json', ctx.chain.errors.errorBody(err), err.retryAfter, closeConnection);
  finish(ctx, outcome, err.status, err.code, usage);
}

/** Runs once: the ending is set and the endpoint's closing steps (settle, records, trace) run. */
export function finish(ctx: RequestContext, outcome: AuditOutcome, status: number, errorCode: string | null, usage?: UsageOutcome): void {
  if (ctx.finished) return;
  ctx.finished = true;
  if (ctx.registered) ctx.deps.inFlight.remove(ctx);
  ctx.outcome = outcome;
  ctx.status = status;
  ctx.errorCode = errorCode;
  ctx.usage = usage;
  ctx.elapsedMs = performance.now() - ctx.startedAt;
  const clock = ctx.clock;
  // Finished is answered: the last byte was handed to the socket before the closing steps run.
  clock?.mark('answered');
  const closing = ctx.chain.closing;
  for (let i = 0; i < closing.length; i++) closing[i]!(ctx);
  if (clock !== null) {
    clock.mark('closed');
    ctx.deps.stepTimes?.add(clock);
  }
}

/** The key (or project) was deleted or expired, or the gateway drains: end now, provider included. */
export function revoke(ctx: RequestContext, reason: GatewayError = Errors.keyDeleted()): void {
  if (ctx.finished) return;
  const meter = ctx.chain.meter;
  const outcome = reason.code === 'UNAUTHORIZED' ? 'auth_failed' : 'error';
  if (meter === null) return fail(ctx, reason, outcome);
  ctx.revoked = true;
  if (reason.code === 'UNAUTHORIZED') ctx.deps.metrics.revocations.inc();
  const usage = meter(ctx, 'cancelled');
  ctx.cancel?.abort();
  fail(ctx, reason, outcome, usage);
}

/**
 * The client went away. Before its key was adopted, or on an endpoint that calls no provider, the
 * request ends at once; later, the provider call is stopped and its step ends the request.
 */
export function clientGone(ctx: RequestContext): void {
  if (ctx.admitted && ctx.chain.meter !== null) {
    ctx.cancel?.abort();
    return;
  }
  finish(ctx, 'cancelled', CLIENT_CLOSED, null);
}

/** Last resort for a bug below: answer 500 and keep the process and the records whole. */
export function crashed(ctx: RequestContext, err: unknown): void {
  ctx.cancel?.abort();
  if (err instanceof RangeError && /call stack/i.test(err.message)) {
    // JSON nested thousands of levels deep parses, then overflows the stack of whatever walks
    // it next: the client's body is at fault, not the gateway.
    fail(ctx, Errors.nestedTooDeeply(), 'error');
    return;
  }
  ctx.deps.log.error({ err: { message: (err as Error)?.message, stack: (err as Error)?.stack } }, 'request failed unexpectedly');
  fail(ctx, Errors.internal(err), 'error');
}
