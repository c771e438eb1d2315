import { GatewayError } from '@gateway/shared';
import type { RequestContext } from './context.js';

/** Returned by a step that resumes the chain itself, from a callback (`ctx.run(ctx.step + 1)`). */
export const PAUSE = Symbol('pause');

/**
 * Runs a request's steps from `from` on, in order, synchronously while they return nothing:
 * a promise is made only by a step that waits, and the chain goes on when it settles (Hono's
 * `compose`, without a promise per step). Stops once the request is answered. A GatewayError a
 * step throws is the request's fault (a field, an unknown model) and answered as it is; anything
 * else thrown is a bug, answered 500 by `crashed`, and the process and the records stay whole.
 */
export function run(ctx: RequestContext, from: number): void {
  const steps = ctx.chain.steps;
  const clock = ctx.clock;
  for (let i = from; i < steps.length; i++) {
    if (ctx.finished) return;
    ctx.step = i;
    clock?.markStep(steps[i]!);
    let out;
    try {
      out = steps[i]!(ctx);
    } catch (err) {
      if (err instanceof GatewayError) ctx.fail(err, 'error');
      else ctx.crashed(err);
      return;
    }
    if (out === undefined) continue;
    if (out !== PAUSE) {
      out.then(
        () => run(ctx, i + 1),
        (err: unknown) => ctx.crashed(err),
      );
    }
    return;
  }
}
