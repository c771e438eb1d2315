import { batchPrice, Errors, GatewayError, type BudgetRule, type ProjectPolicy } from '@gateway/shared';
import { NANOS_PER_USD } from '../policy/budget-leases.js';
import { costUsd } from '../pipeline/request-records.js';
import type { ClosingStep } from '../pipeline/endpoint.js';
import type { RequestContext } from '../pipeline/context.js';
import { countRequest, writeRecords } from '../pipeline/steps/closing.js';
import { applicableRules, routeBound, worstCaseNanos } from '../pipeline/steps/budgets.js';
import { begin, callModel, chatRequestOf, forTarget, startCancel, upstreamFailed } from '../pipeline/steps/provider.js';
import type { Route } from '../routing/model-router.js';
import type { LineExchange } from './line-exchange.js';

/**
 * The steps that make a batch line's chain a provider-run one (docs/batches.md "Provider-run
 * batches"), in two passes of the same chain:
 * - hand-off (in place of the provider call): the line went through every admission step (key,
 *   allow-list, caps, guardrails, rate limits, quota, budgets); when the provider its route draws
 *   has `batch: native`, the request that provider would have been sent is handed to the runner
 *   instead, and the line ends with nothing recorded yet (what it reserved is kept as charged);
 * - collect: once the provider's batch has ended, the line runs again with the provider's answer
 *   in place of the call: it is metered, checked by the output guardrails, answered in the line's
 *   own protocol and recorded — at the batch price — with no admission step able to refuse work
 *   the provider has done (its true count and cost replace what it was charged, never checked).
 */

/** Hand-off: the drawn provider runs batches itself, or the line is called now as the gateway runs it. */
export function handOffOrCall(ctx: RequestContext): void | Promise<void> {
  const route = ctx.route as Route;
  const ex = ctx.ex as LineExchange;
  if (ctx.pinnedProvider !== null || !ex.handOff || !runsBatches(route)) return callModel(ctx);
  const target = route.plan(Date.now(), Math.random, ctx)[0];
  const batches = target?.adapter.batches;
  // A batch too small for the provider's minimum is run here, at the model's normal price.
  if (target === undefined || batches === undefined || ex.batchLines < batches.minLines) return callModel(ctx);
  const request = forTarget(ctx, chatRequestOf(ctx), target);
  const { operation, body } = batches.line({ ...request, stream: false });
  const prepaid = prepay(ctx);
  ex.handedOff = { provider: target.adapter.name, operation, body, giveBack: () => settlePrepaid(ctx, prepaid, 0, 0) };
  ctx.finish('success', 202, null);
}

const batchRoutes = new WeakMap<Route, boolean>();

/** Whether some target of the route runs batches itself (worked out once per route). */
function runsBatches(route: Route): boolean {
  let known = batchRoutes.get(route);
  if (known === undefined) {
    known = route.targets.some((target) => target.adapter.batches !== undefined);
    batchRoutes.set(route, known);
  }
  return known;
}

/**
 * A handed-off line keeps what it reserved — its estimate in the quota, its worst case in the
 * budgets — as spent, in the window of the moment it was first claimed (which its records carry),
 * so the lines of one provider batch cannot together pass a limit that each alone would not.
 * Collecting the line settles the difference to its true count and cost.
 */
function prepay(ctx: RequestContext): Prepaid {
  const { deps } = ctx;
  const policy = ctx.policy as ProjectPolicy;
  const at = ctx.extras?.recordTs ?? Date.now();
  let tokens = 0;
  if (ctx.reservation !== null) {
    tokens = ctx.reservation.amount;
    deps.quotas.settle(ctx.reservation, 0);
    ctx.reservation = null;
    deps.quotas.adjust(policy, at, tokens);
  }
  let nanos = 0;
  let rules: readonly BudgetRule[] | null = null;
  const hold = ctx.budgetHold;
  if (hold !== null) {
    nanos = hold.parts[0]?.amount ?? 0;
    rules = budgetRulesOf(ctx);
    deps.budgets.settle(hold, 0);
    ctx.budgetHold = null;
    if (rules !== null) deps.budgets.adjust(ctx.projectId, rules, at, nanos);
  }
  return { tokens, nanos, rules, at };
}

/** What a handed-off line was charged, so its collection (or its never being sent) settles the rest. */
export interface Prepaid {
  tokens: number;
  nanos: number;
  rules: readonly BudgetRule[] | null;
  at: number;
}

/** The line's true count and cost in place of what it was charged when handed off. */
function settlePrepaid(ctx: RequestContext, prepaid: Prepaid, tokens: number, nanos: number): void {
  ctx.deps.quotas.adjust(ctx.policy as ProjectPolicy, prepaid.at, tokens - prepaid.tokens);
  if (prepaid.rules !== null) ctx.deps.budgets.adjust(ctx.projectId, prepaid.rules, prepaid.at, nanos - prepaid.nanos);
}

function budgetRulesOf(ctx: RequestContext): readonly BudgetRule[] | null {
  const rules = (ctx.policy as ProjectPolicy).budgets;
  return rules === undefined ? null : applicableRules(rules, ctx.keyId, ctx.extras?.tags ?? null);
}

/** Closing, hand-off pass: a line handed to a provider is counted and recorded when it is collected, not now. */
export const recordsUnlessHandedOff: ClosingStep = (ctx) => {
  if ((ctx.ex as LineExchange).handedOff !== null) return;
  countRequest(ctx);
  writeRecords(ctx);
};

/**
 * Collect pass, in place of the quota and budget steps: what the line was charged when it was
 * handed off, worked out again as it was (its estimate, its worst case over the route), for the
 * closing step to settle against its true count and cost. Nothing is checked: the work is done.
 */
export function prepaidCharges(ctx: RequestContext): void {
  const rules = budgetRulesOf(ctx);
  const bound = rules === null ? null : routeBound(ctx.route as Route);
  (ctx.ex as LineExchange).prepaid = {
    tokens: (ctx.policy as ProjectPolicy).quota_tokens === null ? 0 : ctx.estimate,
    nanos: bound === null ? 0 : worstCaseNanos(ctx, bound),
    rules: bound === null ? null : rules,
    at: ctx.extras?.recordTs ?? Date.now(),
  };
}

/** Closing, collect pass (before `settle`): the line's true count and cost replace what it was charged. */
export const settleCollected: ClosingStep = (ctx) => {
  const prepaid = (ctx.ex as LineExchange).prepaid;
  if (prepaid === null) return;
  const usage = ctx.usage;
  const cost = usage === undefined ? null : costUsd(usage);
  settlePrepaid(ctx, prepaid, usage === undefined ? 0 : usage.input + usage.output, cost === null ? 0 : Math.round(cost * NANOS_PER_USD));
};

/** Collect pass, in place of the provider call: the provider batch's answer to this line, priced at the batch price. */
export function callCollected(ctx: RequestContext): void {
  const collected = (ctx.ex as LineExchange).collected;
  const target = collected === null ? undefined : (ctx.route as Route).targets.find((t) => t.adapter.name === collected.provider);
  startCancel(ctx);
  const batches = target?.adapter.batches;
  if (collected === null || target === undefined || batches === undefined) {
    // The providers file no longer routes this model to the provider that ran the line.
    return upstreamFailed(ctx, Errors.providerFailed(collected?.provider ?? 'none'));
  }
  const request = { ...forTarget(ctx, chatRequestOf(ctx), target), stream: false };
  begin(ctx, target, request);
  ctx.provider = target.adapter.name;
  ctx.attempts = 1;
  ctx.tried.push(target.adapter.name);
  ctx.price = target.entry.price === null ? null : batchPrice(target.entry.price);
  const { status, body } = collected.result;
  if (status < 200 || status > 299) return upstreamFailed(ctx, batches.refusal(status, body));
  try {
    ctx.result = batches.answer(request, body);
  } catch (err) {
    upstreamFailed(ctx, err instanceof GatewayError ? err : Errors.providerFailed(target.adapter.name, err));
  }
}
