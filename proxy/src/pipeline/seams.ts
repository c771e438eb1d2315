import type { ClosingStep, Step } from './endpoint.js';

/**
 * The named points of a model request's chain where optional features plug in as steps, in the
 * order shared/DESIGN.md §7 gives the request path. A
 * feature the gateway does not run leaves its point empty: the step is not in the list at all
 * (no call, no allocation, no Redis command, no promise). A step that is plugged in returns at
 * once for a project that does not use it (one field read of its policy).
 */
export interface Seams {
  /**
   * Before parse: a body this proxy answered from its cache before, byte for byte, whose answer
   * it still holds, takes that request's parse (no JSON parse, no validation) and the answer
   * (`cacheLookup` serves it).
   */
  cacheRecall?: Step;
  /** After parse: request tags (cost attribution) read from the headers and body. */
  tags?: Step;
  /** After parse: a cached answer served without calling a provider (the step answers; the chain ends). */
  cacheLookup?: Step;
  /** Before admission: the prompt checked by input guardrails. */
  guardrailsIn?: Step;
  /** In admission, after the quota: spending budgets. */
  budgets?: Step;
  /**
   * After the provider, before respond: the answer checked by output guardrails — a whole answer
   * at once, a stream by wrapping `ctx.result.events` (as tracing watches a stream).
   */
  guardrailsOut?: Step;
  /**
   * After guardrailsOut, before respond: a stream's chunks watched as they are sent, so what the
   * cache stores is what the client received (the answer after the output guardrails).
   */
  cacheCollect?: Step;
  /** First of the closing steps: a successful answer stored for later lookups. */
  cacheStore?: ClosingStep;
}

/** The steps given, without the empty seams: resolved once, at start-up. */
export function present<S>(...steps: readonly (S | undefined)[]): readonly S[] {
  return steps.filter((step): step is S => step !== undefined);
}
