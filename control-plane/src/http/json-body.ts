import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GatewayError } from '@gateway/shared';

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
    parseJson(req, body as string, done);
  });
  app.addHook('preValidation', async (req) => {
    if (req.body === undefined && takesBody(req)) throw emptyBody();
  });
}

function takesBody(req: FastifyRequest): boolean {
  return req.routeOptions.schema?.body !== undefined;
}

function emptyBody(): GatewayError {
  return new GatewayError('INVALID_REQUEST', 'The body is empty; send a JSON object.');
}
