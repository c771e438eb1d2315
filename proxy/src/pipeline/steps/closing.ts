import type { RequestContext } from '../context.js';
import { auditEvent, usageRecord } from '../request-records.js';
import { settleBudgets } from './budgets.js';

/**
 * The closing steps: run once on every way out (exits.ts `finish`), after the ending is set.
 * Nothing here waits; the records are appended to the buffer, encoded and sent per batch.
 */

/** The quota and budget reservations settled to the true count and cost; the request leaves the drain's count. */
export function settle(ctx: RequestContext): void {
  const { deps, usage } = ctx;
  if (ctx.reservation !== null) deps.quotas.settle(ctx.reservation, usage === undefined ? 0 : usage.input + usage.output);
  if (ctx.budgetHold !== null) settleBudgets(ctx);
  deps.state.active--;
}

export function countRequest(ctx: RequestContext): void {
  const provider = ctx.provider;
  ctx.deps.metrics.perRequest.record(ctx.status, provider === null ? 'none' : (ctx.model ?? 'none'), provider ?? 'none', ctx.endpoint ?? 'models', ctx.elapsedMs / 1000);
}

/** One audit event always; one usage record once a provider was called. */
export function writeRecords(ctx: RequestContext): void {
  const { records } = ctx.deps;
  const latencyMs = Math.round(ctx.elapsedMs);
  const timestamp = Date.now();
  records.pushAudit(auditEvent(ctx, ctx.key ?? ctx.knownKey, ctx.outcome, ctx.status, ctx.errorCode, timestamp, latencyMs));
  const { usage, key, provider, model } = ctx;
  if (usage !== undefined && key !== null && provider !== null && model !== null) {
    records.pushUsage(usageRecord(ctx, key, model, provider, usage, timestamp, latencyMs));
  }
}

export function endTrace(ctx: RequestContext): void {
  ctx.trace?.end(ctx.outcome, ctx.status, ctx.errorCode, ctx.usage);
}
