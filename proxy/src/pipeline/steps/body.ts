import { Errors } from '@gateway/shared';
import type { RequestContext } from '../context.js';
import { PAUSE } from '../run.js';
import { parseJsonBody } from '../../protocols/json-body.js';
import { holdBodyForKey, identify, knownNow } from './authenticate.js';

/** A new request while the gateway drains is refused at once (503, retryable elsewhere). */
export function refuseWhileDraining(ctx: RequestContext): void {
  if (!ctx.deps.state.draining) return;
  identify(ctx);
  ctx.fail(Errors.shuttingDown(), 'error');
}

/**
 * Reads the body (while the key check runs), refusing it the moment it passes the limit, a
 * declared content-length over the limit before any byte is read; while Redis is asked about a
 * new key, the socket is not read until it answers. The chain goes on from the body's last
 * chunk: a callback, not a promise.
 */
export function readBody(ctx: RequestContext): typeof PAUSE | void {
  return readBodyUpTo(ctx, ctx.deps.config.maxBodyBytes, () => tooLarge(ctx));
}

/** readBody with the route's own limit and refusal (a Message Batches body is far larger than one request). */
export function readBodyUpTo(ctx: RequestContext, limit: number, refuse: () => void): typeof PAUSE | void {
  if (ctx.info.contentLength > limit) return refuse();
  const next = ctx.step + 1;
  ctx.ex.readBody(
    limit,
    (raw) => {
      ctx.raw = raw;
      ctx.run(next);
    },
    refuse,
  );
  const auth = ctx.auth;
  if (auth instanceof Promise) holdBodyForKey(ctx, auth);
  return PAUSE;
}

function tooLarge(ctx: RequestContext): void {
  const known = knownNow(ctx);
  if (known !== null) ctx.key = known;
  else identify(ctx);
  ctx.fail(Errors.bodyTooLarge(ctx.deps.config.maxBodyBytes), 'error');
}

/**
 * The body must be declared JSON (or undeclared), be UTF-8 and parse (a syntax error says where:
 * protocols/json-body.ts). Bytes parsed before and handed in as `recalled` are not parsed again.
 */
export function parseJson(ctx: RequestContext): void {
  if (!ctx.info.jsonBody) return ctx.fail(Errors.bodyNotJsonType(), 'error');
  const recalled = ctx.recalled;
  ctx.json = recalled !== null ? recalled.json : parseJsonBody(ctx.raw as Buffer);
}
