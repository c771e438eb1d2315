import { Errors, type ProjectPolicy } from '@gateway/shared';
import { Masker } from '@gateway/shared/guardrails';
import type { RequestContext } from '../pipeline/context.js';
import { translateScanned, type ParsedRequest } from '../protocols/protocol.js';
import { runGuards, type GuardOutcome } from './run-guards.js';
import { embeddingsSlots, promptSlots } from './slots.js';
import type { GuardrailRuntime } from './runtime.js';
import { jsonBytes } from '../request/json-bytes.js';

/**
 * guardrails (input): the prompt checked before admission. It runs before the admission's policy
 * step, so it takes the policy itself (the same Map lookup, kept on the context for admission).
 * A project without guardrails pays one field read. Block → 400 GUARDRAIL_BLOCKED (`param` the
 * guardrail), no provider call and no usage record; mask → the provider sees placeholders.
 */
export function guardrailsIn(ctx: RequestContext): void | Promise<void> {
  const runtime = ctx.deps.guardrails;
  if (runtime === undefined) return;
  let found: ProjectPolicy | Promise<ProjectPolicy>;
  try {
    found = ctx.deps.policies.get(ctx.projectId);
  } catch {
    // Unreadable: the admission's policy step answers it.
    return;
  }
  if (!(found instanceof Promise)) return check(ctx, runtime, found);
  return found.then(
    (policy) => check(ctx, runtime, policy),
    () => {},
  );
}

/** Texts × input guards one request may ask for (about 50 ms of a core at the very worst). */
export const MAX_GUARD_CHECKS = 50_000;

function check(ctx: RequestContext, runtime: GuardrailRuntime, policy: ProjectPolicy): void | Promise<void> {
  ctx.policy = policy;
  const guardrails = policy.guardrails;
  if (guardrails === undefined || guardrails === null) return;
  const compiled = runtime.compiledFor(policy, guardrails);
  const embeddings = ctx.embeddings;
  const parsed = embeddings === null ? (ctx.parsed as ParsedRequest) : null;
  // Guardrails read the internal request: a body only scanned is translated for them.
  if (parsed !== null) translateScanned(parsed);
  // Guarded answers are read in the internal (OpenAI) format: no native pass-through, so a body
  // only the native path could carry is refused now, before anything is counted.
  if (parsed !== null && compiled.output.length > 0) {
    if (parsed.untranslatable !== undefined) return ctx.fail(parsed.untranslatable, 'error');
    parsed.native = undefined;
  }
  if (compiled.input.length === 0) return;
  const slots = embeddings !== null ? embeddingsSlots(embeddings) : promptSlots((parsed as ParsedRequest).chat as { messages: unknown[] });
  // Each text costs each guard a call whatever its length: a body of countless tiny texts would
  // hold the worker (every tenant's requests on it) for as long as it takes, so it is refused.
  if (slots.length * compiled.input.length > MAX_GUARD_CHECKS) return ctx.fail(Errors.tooMuchToGuard(slots.length, compiled.input.length, MAX_GUARD_CHECKS), 'policy_blocked');
  const before = slots.map((s) => s.text);
  const outcome = runGuards(ctx, runtime, compiled.input, slots, 'input', new Masker());
  const settle = (result: GuardOutcome): void => {
    if (result === null) {
      // A masked prompt: the client's bytes (and its native form) can no longer be sent as they are.
      if (slots.some((s, i) => s.text !== before[i])) {
        ctx.forward = null;
        if (parsed !== null) {
          if (parsed.untranslatable !== undefined) return ctx.fail(parsed.untranslatable, 'error');
          parsed.raw = null;
          parsed.native = undefined;
        } else {
          ctx.raw = jsonBytes(embeddings);
        }
      }
      return;
    }
    if (result.kind === 'block') ctx.fail(Errors.guardrailBlocked(result.id, result.reason ?? undefined), 'policy_blocked');
    else ctx.fail(Errors.guardrailUnavailable(result.id), 'error');
  };
  if (outcome instanceof Promise) return outcome.then(settle);
  settle(outcome);
}
