import { Errors, type ProjectPolicy } from '@gateway/shared';
import { Masker } from '@gateway/shared/guardrails';
import { MAX_GUARD_CHECKS } from '../guardrails/input-step.js';
import { runGuards, type GuardOutcome, type Slot } from '../guardrails/run-guards.js';
import { RPC } from './jsonrpc.js';
import type { McpRequest } from './mcp-request.js';

/**
 * The project's input guardrails marked `mcp: true` over a tools/call's arguments, before the call
 * is admitted (nothing is counted for a call they refuse): every string in `params.arguments` is a
 * text. A block answers the call with a JSON-RPC error (`GUARDRAIL_BLOCKED`, audited
 * `policy_blocked`) and the server never sees it; a mask rewrites the arguments in place (the
 * caller forwards the message re-serialised, `req.argumentsMasked`); a guard that cannot answer
 * refuses as on the model endpoints. False: refused and answered.
 */
export function guardToolCall(req: McpRequest, policy: ProjectPolicy, message: Record<string, unknown>): boolean | Promise<boolean> {
  const guardrails = policy.guardrails;
  const runtime = req.deps.guardrails;
  if (guardrails === undefined || guardrails === null || runtime === undefined) return true;
  const guards = runtime.compiledFor(policy, guardrails).mcp;
  if (guards.length === 0) return true;
  const params = message.params as Record<string, unknown> | undefined;
  const slots: Slot[] = [];
  if (typeof params === 'object' && params !== null) collect(params, 'arguments', slots, 0);
  if (slots.length === 0) return true;
  if (slots.length * guards.length > MAX_GUARD_CHECKS) {
    req.fail(Errors.tooMuchToGuard(slots.length, guards.length, MAX_GUARD_CHECKS), 'policy_blocked');
    return false;
  }
  const before = slots.map((s) => s.text);
  const settle = (outcome: GuardOutcome): boolean => {
    if (req.finished) return false;
    if (outcome === null) {
      if (slots.some((s, i) => s.text !== before[i])) req.argumentsMasked = true;
      return true;
    }
    if (outcome.kind === 'block') req.refuseCall(Errors.guardrailBlocked(outcome.id, outcome.reason ?? undefined), RPC.invalidParams);
    else req.fail(Errors.guardrailUnavailable(outcome.id), 'error');
    return false;
  };
  const outcome = runGuards(req, runtime, guards, slots, 'input', new Masker());
  return outcome instanceof Promise ? outcome.then(settle) : settle(outcome);
}

/** Every string under holder[field], as a slot that writes back in place; deeper than any real argument is not read. */
function collect(holder: Record<string, unknown> | unknown[], field: string | number, out: Slot[], depth: number): void {
  const value = (holder as Record<string | number, unknown>)[field];
  if (typeof value === 'string') {
    const slot: Slot = {
      text: value,
      set(text) {
        slot.text = text;
        (holder as Record<string | number, unknown>)[field] = text;
      },
    };
    out.push(slot);
    return;
  }
  if (depth > 32 || typeof value !== 'object' || value === null) return;
  if (Array.isArray(value)) for (let i = 0; i < value.length; i++) collect(value, i, out, depth + 1);
  else for (const key of Object.keys(value)) collect(value as Record<string, unknown>, key, out, depth + 1);
}
