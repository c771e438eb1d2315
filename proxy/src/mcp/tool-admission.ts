import { Errors, GatewayError, type McpServerAllowance, type ProjectPolicy } from '@gateway/shared';
import { NANOS_PER_USD, type BudgetHold } from '../policy/budget-leases.js';
import type { Reservation } from '../policy/quota-leases.js';
import { applicableRules } from '../pipeline/steps/budgets.js';
import { RPC } from './jsonrpc.js';
import type { McpRequest } from './mcp-request.js';
import { toolAllowed } from './tool-access.js';
import { guardToolCall } from './tool-guardrails.js';

/**
 * A tools/call's admission: the tool on the project's list (else a JSON-RPC error, and the server
 * never sees the call), then the guardrails that read tool arguments (tool-guardrails.ts), then the rate limits, which count tool calls as requests (no tokens), then
 * the project's quota and budgets as for a model call: a project past its token quota makes no
 * more calls (a call is admitted against one token and settled at none), and a priced tool's
 * `price_per_call` is reserved in every budget that applies and settled when the call ends
 * (McpRequest.finish). The call's `execute_tool` span (tracing on) starts first, so a refusal is
 * traced too. False: refused and answered. A promise only when a check waits on Redis.
 */
export function admitToolCall(req: McpRequest, policy: ProjectPolicy, allowance: McpServerAllowance | null, tool: string, shownName: string, price: number | null, message: Record<string, unknown>): boolean | Promise<boolean> {
  const tracer = req.deps.tracer;
  if (tracer !== null) {
    const { info } = req;
    req.trace = tracer.tool({
      traceparent: info.traceparent,
      tracestate: info.tracestate,
      route: info.server === null ? '/mcp' : '/mcp/{server}',
      requestId: info.requestId,
      projectId: req.projectId,
      keyId: req.keyId,
      server: req.server,
      tool,
      callId: String(req.rpcId),
    });
  }
  if (allowance === null || !toolAllowed(allowance, tool)) {
    req.refuseCall(Errors.toolNotAllowed(shownName), RPC.invalidParams);
    return false;
  }
  const guarded = guardToolCall(req, policy, message);
  if (guarded instanceof Promise) return guarded.then((ok) => ok && limits(req, policy, price));
  return guarded && limits(req, policy, price);
}

/** The rate limits, then the quota and budgets (after the guardrails: a refused call counts nothing). */
function limits(req: McpRequest, policy: ProjectPolicy, price: number | null): boolean | Promise<boolean> {
  const rate = req.deps.rateLimiter.check(policy, req.keyId, 0, Date.now());
  const spends = policy.quota_tokens !== null || policy.budgets !== undefined;
  if (rate === null) return spends ? spend(req, policy, price) : true;
  const rated = (refused: GatewayError | null) => rateAnswer(req, refused) && (!spends || spend(req, policy, price));
  return rate instanceof Promise ? rate.then(rated) : rated(rate);
}

async function spend(req: McpRequest, policy: ProjectPolicy, price: number | null): Promise<boolean> {
  if (policy.quota_tokens !== null) {
    const reserved = await req.deps.quotas.reserve(policy, 1, Date.now());
    if (!held(req, reserved)) return false;
    req.quotaHold = reserved as Reservation;
  }
  const rules = policy.budgets === undefined || price === null || price === 0 ? null : applicableRules(policy.budgets, req.keyId, req.key?.tags ?? null);
  if (rules === null || price === null) return true;
  const reserved = await req.deps.budgets.reserve(req.projectId, rules, Math.round(price * NANOS_PER_USD), Date.now());
  if (!held(req, reserved)) return false;
  req.budgetHold = reserved as BudgetHold;
  return true;
}

/** A refusal is answered; a hold taken while the request ended (revoked, client gone) is given back at once. */
function held(req: McpRequest, result: Reservation | BudgetHold | GatewayError): boolean {
  if (result instanceof GatewayError) {
    if (!req.finished) req.fail(result, result.code === 'QUOTA_EXCEEDED' || result.code === 'BUDGET_EXCEEDED' ? 'policy_blocked' : 'error');
    return false;
  }
  if (req.finished) {
    if ('parts' in result) req.deps.budgets.settle(result, 0);
    else req.deps.quotas.settle(result, 0);
    return false;
  }
  return true;
}

function rateAnswer(req: McpRequest, refused: GatewayError | null): boolean {
  if (req.finished) return false;
  if (refused !== null) {
    req.fail(refused, refused.code === 'RATE_LIMITED' ? 'policy_blocked' : 'error');
    return false;
  }
  return true;
}
