import { Errors } from '@gateway/shared';
import type { RequestContext } from '../context.js';
import { PAUSE } from '../run.js';
import { identify, knownNow } from './authenticate.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A new request while the gateway drains is refused at once (503, retryable elsewhere). */
export function refuseWhileDraining(ctx: RequestContext): void {
  if (!ctx.deps.state.draining) return;
  identify(ctx);
  ctx.fail(Errors.shuttingDown(), 'error');
}

/**
 * Reads the body (while the key check runs), refusing it the moment it passes the limit, a
 * declared content-length over the limit before any byte is read. The chain goes on from the
 * body's last chunk: a callback, not a promise.
 */
export function readBody(ctx: RequestContext): typeof PAUSE | void {
  const limit = ctx.deps.config.maxBodyBytes;
  if (ctx.info.contentLength > limit) return tooLarge(ctx);
  const next = ctx.step + 1;
  ctx.ex.readBody(
    limit,
    (raw) => {
      ctx.raw = raw;
      ctx.run(next);
    },
    () => tooLarge(ctx),
  );
  return PAUSE;
}

function tooLarge(ctx: RequestContext): void {
  const known = knownNow(ctx);
  if (known !== null) ctx.key = known;
  else identify(ctx);
  ctx.fail(Errors.bodyTooLarge(ctx.deps.config.maxBodyBytes), 'error');
}

/** The body must be declared JSON (or undeclared), be UTF-8 and parse. */
export function parseJson(ctx: RequestContext): void {
  if (!ctx.info.jsonBody) return ctx.fail(Errors.bodyNotJsonType(), 'error');
  try {
    ctx.json = JSON.parse(utf8.decode(ctx.raw as Buffer));
  } catch (err) {
    return ctx.fail(err instanceof SyntaxError ? Errors.bodyNotJson() : Errors.bodyNotUtf8(), 'error');
  }
}
