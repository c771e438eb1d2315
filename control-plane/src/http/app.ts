import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import { GatewayError, requestIdFrom } from '@gateway/shared';
import type { AppContext } from '../context.js';
import { loggerOptions } from '../logger.js';
import { httpMetrics } from '../metrics.js';
import { registerHealthRoutes } from './routes/health.js';

/**
 * The management API. Fastify brings routing, JSON-schema validation of bodies and queries, and
 * the schemas the OpenAPI document is generated from; errors of every kind leave in the same
 * OpenAI-style shape the gateway uses.
 */
export async function buildApp(ctx: AppContext): Promise<FastifyInstance> {
  const app = Fastify({
    logger: loggerOptions(ctx.config.logLevel, 'control-plane'),
    bodyLimit: 1024 * 1024,
    genReqId: (req) => requestIdFrom(firstHeader(req.headers['x-request-id'])),
    requestIdHeader: false,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', allErrors: false } },
  });

  const metrics = httpMetrics(ctx.metrics);
  app.addHook('onRequest', async (req, reply) => {
    reply.header('x-request-id', req.id);
  });
  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unmatched';
    metrics.requests.inc({ route, status: String(reply.statusCode) });
    metrics.latency.observe({ route }, reply.elapsedTime / 1000);
  });

  app.setErrorHandler((err: FastifyError, req, reply) => {
    const gatewayError = asGatewayError(err);
    if (gatewayError.status >= 500) req.log.error({ err }, 'request failed');
    if (gatewayError.retryAfter !== undefined) reply.header('retry-after', String(gatewayError.retryAfter));
    void reply.status(gatewayError.status).send(gatewayError.toBody());
  });

  app.setNotFoundHandler((req, reply) => {
    const err = new GatewayError('NOT_FOUND', `No route for ${req.method} ${req.url.split('?')[0]}`);
    void reply.status(err.status).send(err.toBody());
  });

  registerHealthRoutes(app, ctx);
  return app;
}

function asGatewayError(err: FastifyError): GatewayError {
  if (err instanceof GatewayError) return err;
  if (err.validation) {
    const first = err.validation[0];
    const field = first?.instancePath ? first.instancePath.replace(/^\//, '').replace(/\//g, '.') : (first?.params as { missingProperty?: string } | undefined)?.missingProperty;
    const where = err.validationContext ?? 'body';
    const message = `${where}${field ? `.${field}` : ''} ${first?.message ?? 'is invalid'}`;
    return new GatewayError('INVALID_REQUEST', message, { param: field ?? null });
  }
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new GatewayError('PAYLOAD_TOO_LARGE');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new GatewayError('UNSUPPORTED_MEDIA_TYPE');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new GatewayError('INVALID_REQUEST', 'The body is empty; send a JSON object.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new GatewayError('INVALID_REQUEST', 'The body is not valid JSON.');
  }
  if (err.statusCode === 400) return new GatewayError('INVALID_REQUEST', 'The body is not valid JSON.');
  return new GatewayError('INTERNAL', undefined, { cause: err });
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
