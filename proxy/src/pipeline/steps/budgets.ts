import { DEFAULT_MAX_OUTPUT_TOKENS, Errors, GatewayError, type BudgetRule, type ProjectPolicy } from '@gateway/shared';
import { NANOS_PER_USD, type BudgetHold } from '../../policy/budget-leases.js';
import { costUsd } from '../request-records.js';
import { completions } from '../../policy/caps.js';
import type { ParsedRequest } from '../../protocols/protocol.js';
import type { Route } from '../../routing/model-router.js';
import type { RequestContext } from '../context.js';

/**
 * admission → budgets (DESIGN §7): the request's worst-case cost reserved in every budget that
 * applies to it, all or none, from this proxy's dollar leases (policy/budget-leases.ts); settled to
 * its cost_usd by the closing `settle` step. A project without budgets pays one field read.
 *
 * Worst case = estimated prompt tokens × the route's highest input price + the most output it may
 * produce × the highest output price; the most output is max_tokens (max_completion_tokens, the
 * larger when both are sent) × n, else the model's `max_output_tokens` × n. Every provider of the
 * route counts (failover may serve it from any), so one without a price refuses the request
 * (403 MODEL_NOT_PRICED): its cost could not be bounded.
 */
export function budgets(ctx: RequestContext): void | Promise<void> {
  const rules = (ctx.policy as ProjectPolicy).budgets;
  if (rules === undefined) return;
  // Any budget of the project, even one that does not count this request (DESIGN §7).
  const bound = routeBound(ctx.route as Route);
  if (bound === null) return ctx.fail(Errors.modelNotPriced(ctx.model as string), 'policy_blocked');
  const applicable = applicableRules(rules, ctx.keyId, ctx.extras?.tags ?? null);
  if (applicable === null) return;
  const amount = worstCaseNanos(ctx, bound);
  const held = ctx.deps.budgets.reserve(ctx.projectId, applicable, amount, Date.now());
  if (!(held instanceof Promise)) return hold(ctx, held);
  return held.then((result) => hold(ctx, result));
}

function hold(ctx: RequestContext, result: BudgetHold | GatewayError): void {
  if (result instanceof GatewayError) return ctx.fail(result, result.code === 'BUDGET_EXCEEDED' ? 'policy_blocked' : 'error');
  // Revoked or abandoned while a lease was taken: nothing was spent.
  if (ctx.finished) return ctx.deps.budgets.settle(result, 0);
  ctx.budgetHold = result;
}

/** Closing: the reservation becomes the request's cost (0 when no provider was called). */
export function settleBudgets(ctx: RequestContext): void {
  const usage = ctx.usage;
  const cost = usage === undefined ? null : costUsd(usage);
  ctx.deps.budgets.settle(ctx.budgetHold as BudgetHold, cost === null ? 0 : Math.round(cost * NANOS_PER_USD));
}

/**
 * The budgets this request counts against: every project budget, the key's own, and those of its
 * tags. The project's list itself when all apply (no allocation); null when none does.
 */
export function applicableRules(rules: readonly BudgetRule[], keyId: string, tags: Readonly<Record<string, string>> | null): readonly BudgetRule[] | null {
  let out: BudgetRule[] | null = null;
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i]!;
    if (applies(rule, keyId, tags)) {
      if (out !== null) out.push(rule);
    } else if (out === null) {
      out = rules.slice(0, i);
    }
  }
  if (out === null) return rules;
  return out.length === 0 ? null : out;
}

function applies(rule: BudgetRule, keyId: string, tags: Readonly<Record<string, string>> | null): boolean {
  if (rule.scope === 'project') return true;
  if (rule.scope === 'key') return rule.key_id === keyId;
  if (tags === null || rule.tag === null) return false;
  const at = rule.tag.indexOf('=');
  return tags[rule.tag.slice(0, at)] === rule.tag.slice(at + 1);
}

/** The highest prices and output limit among a route's providers; null when one has no price. */
interface RouteBound {
  input: number;
  output: number;
  maxOutput: number;
}

const bounds = new WeakMap<Route, RouteBound | null>();

export function routeBound(route: Route): RouteBound | null {
  let bound = bounds.get(route);
  if (bound !== undefined) return bound;
  bound = { input: 0, output: 0, maxOutput: 0 };
  for (const target of route.targets) {
    const { price, max_output_tokens } = target.entry;
    if (price === null) {
      bound = null;
      break;
    }
    // A prompt written to the provider's cache is billed at cache_write (above input at Anthropic
    // and Bedrock): the worst case prices every prompt token at the dearer of the two.
    bound.input = Math.max(bound.input, price.input, price.cache_write ?? 0);
    bound.output = Math.max(bound.output, price.output);
    bound.maxOutput = Math.max(bound.maxOutput, max_output_tokens ?? DEFAULT_MAX_OUTPUT_TOKENS);
  }
  bounds.set(route, bound);
  return bound;
}

/** Nano-dollars: prices are US dollars per million tokens, so a token costs price × 1000 nano-dollars. */
export function worstCaseNanos(ctx: RequestContext, bound: RouteBound): number {
  const parsed = ctx.parsed as ParsedRequest | null;
  if (parsed === null) return Math.ceil(ctx.estimate * bound.input * 1000);
  const n = completions(parsed);
  const output = (parsed.maxTokens ?? bound.maxOutput) * n;
  const prompt = parsed.promptTokens ?? ctx.estimate;
  return Math.ceil((prompt * bound.input + output * bound.output) * 1000);
}
