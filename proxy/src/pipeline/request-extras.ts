import type { CacheOutcome, GuardrailDecision, RecordTags } from '@gateway/shared';
import type { RequestContext } from './context.js';

/**
 * What the optional steps learnt about a request for its records: cost-attribution tags, the
 * client's end user, what the response cache did, what guardrails decided, the model an alias
 * replaced, and the batch the request is a line of. Most requests learn
 * none of it, so the object exists only once a step has something to say (`extrasOf`), and a
 * request without it has records exactly as before.
 */
export interface RequestExtras {
  tags: RecordTags | null;
  endUser: string | null;
  cache: CacheOutcome | null;
  /** On a cache hit: what the provider call that produced the answer cost. */
  savedUsd: number | null;
  guardrails: GuardrailDecision[] | null;
  /** The model id the client asked for, when the project's model_aliases served another. */
  requestedModel: string | null;
  /** The batch (`batch_…` / `msgbatch_…`) the request is a line of. */
  batchId: string | null;
  /**
   * Unix ms the request's records are stamped with instead of the time it finished: the batch
   * runner fixes it per line, so a line run again after a crash makes records with the same
   * (ts, id) primary key, which the writer's `on conflict do nothing` drops.
   */
  recordTs: number | null;
}

/** The request's extras, created on first use (a model request's, or an MCP request's guardrail decisions). */
export function extrasOf(ctx: Pick<RequestContext, 'extras'>): RequestExtras {
  return (ctx.extras ??= { tags: null, endUser: null, cache: null, savedUsd: null, guardrails: null, requestedModel: null, batchId: null, recordTs: null });
}
