import type { FinishReason, GatewayEndpoint } from '@gateway/shared';
import type { Usage } from '../request/internal-request.js';
import type { ErrorShape } from '../protocols/protocol.js';
import type { RequestContext } from './context.js';
import type { UsageOutcome } from './request-records.js';
import type { PAUSE } from './run.js';

/**
 * One step of a request's chain. It returns nothing when it is done (the next step runs at once,
 * in the same tick), a promise only when it has to wait (a Redis read, the provider), or PAUSE
 * when a callback of its own resumes the chain (the body's last chunk). A step that answers the
 * request (`ctx.fail`, `ctx.finish`) ends the chain: no later step runs.
 */
export type Step = (ctx: RequestContext) => void | Promise<void> | typeof PAUSE;

/** A step run once on every way out, after `finish` set the ending (settle, records, trace). */
export type ClosingStep = (ctx: RequestContext) => void;

/**
 * What a request that called a provider used so far: the provider's counts when known, else the
 * gateway's estimate. Undefined while no provider was called (no usage record then).
 */
export type Meter = (ctx: RequestContext, finishReason: FinishReason, known?: Usage, rawFinishReason?: string | null) => UsageOutcome | undefined;

/** An endpoint: its steps in order, the steps every way out runs, and how it words errors. */
export interface Endpoint {
  /** The inbound API recorded for it (null: the models list, not a model request). */
  readonly name: GatewayEndpoint | null;
  readonly errors: ErrorShape;
  /** Some provider takes its requests as they came: the client's provider headers and query are read (RequestInfo). */
  readonly native?: boolean;
  /** A Files or Batches route: the request's Content-Type and Host are read (RequestInfo). */
  readonly batchRoute?: boolean;
  /** How it meters a provider call; null for endpoints that call none (count_tokens, models). */
  readonly meter: Meter | null;
  readonly steps: readonly Step[];
  readonly closing: readonly ClosingStep[];
}
