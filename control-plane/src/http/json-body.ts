import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Errors, type GatewayError } from '@gateway/shared';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A route whose body carries clients' own JSON (a stored response) allows deeper nesting than MAX_DEPTH. */
    maxJsonDepth?: number;
  }
}

/**
 * JSON bodies, and their absence. Many HTTP clients send `content-type: application/json` on
 * every request, a DELETE with no body included; Fastify's parser refuses such an empty body.
 * Here an empty body is no body on the routes that take none (no body schema), while a route that
 * needs a body answers one clear 400 whether the body is empty or missing altogether.
 */
export function registerJsonBodies(app: FastifyInstance): void {
  // Fastify's own parser, with its prototype-poisoning protection, for every non-empty body.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (body.length === 0) {
      if (takesBody(req)) done(emptyBody(), undefined);
      else done(null, undefined);
      return;
    }
    const max = req.routeOptions.config?.maxJsonDepth ?? MAX_DEPTH;
    if (nestedDeeperThan(body as string, max)) {
      done(Errors.managementBodyTooDeep(max), undefined);
      return;
    }
    parseJson(req, body as string, done);
  });
  app.addHook('preValidation', async (req) => {
    if (req.body === undefined && takesBody(req)) throw emptyBody();
  });
}

/**
 * Deeper than any management body (the deepest is a few levels) and far below what would overflow
 * the stack of the code that walks a parsed body (validation, the U+0000 check): a body of a few
 * hundred thousand brackets fits the size limit and used to end in a 500.
 */
const MAX_DEPTH = 64;

/** One pass over the text, counting brackets outside strings; the JSON parser judges the rest. */
export function nestedDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

function takesBody(req: FastifyRequest): boolean {
  return req.routeOptions.schema?.body !== undefined;
}

function emptyBody(): GatewayError {
  return Errors.managementBodyEmpty();
}
