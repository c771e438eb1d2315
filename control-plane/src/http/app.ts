import fastifyCookie from '@fastify/cookie';
import Fastify, { LogController, type FastifyError, type FastifyInstance } from 'fastify';
import { Errors, GatewayError, requestIdFrom } from '@gateway/shared';
import { requireAuth } from '../auth/require-auth.js';
import type { AppContext } from '../context.js';
import { httpMetrics } from '../metrics.js';
import { auditRefusal } from './audit-refusals.js';
import { resolveClientAddress } from './client-address.js';
import { registerJsonBodies } from './json-body.js';
import { logRequest } from './request-log.js';
import { registerAuditRoutes } from './routes/audit.js';
import { registerDashboard } from './routes/dashboard.js';
import { registerGatewayRoutes } from './routes/gateway.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerInternalBatchRoutes } from './routes/internal-batches.js';
import { registerInternalBatchSubmissionRoutes } from './routes/internal-batch-submissions.js';
import { registerInternalFileRoutes } from './routes/internal-files.js';
import { registerInternalInvalidationRoutes } from './routes/internal-invalidations.js';
import { registerInternalStoredResponseRoutes } from './routes/internal-stored-responses.js';
import { registerKeyRoutes } from './routes/keys.js';
import { registerMemberRoutes } from './routes/members.js';
import { registerOpenApi, registerOpenApiRoute } from './routes/openapi.js';
import { registerProjectRoutes } from './routes/projects.js';
import { registerGuardrailRoutes } from './routes/guardrails.js';
import { registerProjectCacheRoutes } from './routes/project-cache.js';
import { registerOidcSigninRoutes } from './routes/oidc-signins.js';
import { registerSigninRoutes } from './routes/signins.js';
import { registerUsageDownloadRoute } from './routes/usage-export.js';
import { registerUsageRoutes } from './routes/usage.js';
import { registerUserRoutes } from './routes/users.js';
import { registerWebhookRoutes } from './routes/webhooks.js';
import { registerBudgetRoutes } from './routes/budgets.js';
import { registerBatchRoutes } from './routes/batches.js';
import { addSharedSchemas } from './schemas.js';
import { refuseUnstorableText } from './storable-text.js';
import { inferenceOnManagementPort } from './gateway-paths.js';
import { validatorCompiler } from './validation.js';

export interface RouteEntry {
  method: string;
  url: string;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route as registered (method, Fastify path): what the OpenAPI document is checked against. */
    routeTable: RouteEntry[];
  }
}

const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/**
 * The management API. Fastify brings routing, JSON-schema validation of bodies and queries, and
 * the schemas the OpenAPI document is generated from; errors of every kind leave in the same
 * OpenAI-style shape the gateway uses.
 */
export async function buildApp(ctx: AppContext): Promise<FastifyInstance> {
  const app = Fastify({
    // The process logger, so every line (and its redaction) goes to one destination.
    loggerInstance: ctx.log,
    bodyLimit: 1024 * 1024,
    // Path parameters up to 256 characters (Fastify's default, 100, answers 414 to a longer one): a
    // stored response's id (`resp_` and up to 200 characters) is one.
    routerOptions: { maxParamLength: 256 },
    genReqId: (req) => requestIdFrom(firstHeader(req.headers['x-request-id'])),
    requestIdHeader: false,
    // Replaced by logRequest: one line per request rather than an "incoming" and a "completed" one.
    logController: new LogController({ disableRequestLogging: true }),
  }) as unknown as FastifyInstance;
  ctx.tracer?.traceRequests(app);
  app.setValidatorCompiler(validatorCompiler());
  // Bodies are JSON only: a text/plain body is refused with 415 rather than parsed into a string.
  app.removeContentTypeParser('text/plain');
  registerJsonBodies(app);
  app.addHook('preValidation', refuseUnstorableText);
  app.decorateRequest('principal', null);
  // Cookie parsing and Set-Cookie serialisation by the Fastify team's plugin rather than by hand:
  // quoting, encoding and attribute rules are easy to get subtly wrong. Only the dashboard's
  // session cookie (auth/refresh-cookie.ts) is ever read.
  await app.register(fastifyCookie);

  const routeTable: RouteEntry[] = [];
  app.decorate('routeTable', routeTable);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routeTable.push({ method, url: route.url });
  });

  const metrics = httpMetrics(ctx.metrics);
  app.addHook('onRequest', async (req, reply) => {
    reply.header('x-request-id', req.id);
  });
  app.addHook('onRequest', resolveClientAddress(ctx.config.trustProxy));
  app.addHook('onResponse', logRequest);
  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unmatched';
    metrics.requests.inc({ route, status: String(reply.statusCode) });
    metrics.latency.observe({ route }, reply.elapsedTime / 1000);
  });

  app.setErrorHandler(async (err: FastifyError, req, reply) => {
    const gatewayError = asGatewayError(err);
    if (gatewayError.status >= 500) req.log.error({ err }, 'request failed');
    await auditRefusal(ctx, req, reply, gatewayError);
    if (gatewayError.retryAfter !== undefined) reply.header('retry-after', String(gatewayError.retryAfter));
    return reply.status(gatewayError.status).send(gatewayError.toBody());
  });

  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0] ?? '/';
    const allowed = HTTP_METHODS.filter((method) => app.findRoute({ method, url: path }) !== null);
    const err =
      allowed.length > 0
        ? Errors.methodNotAllowedUse(req.method, path, allowed.join(', '))
        : (inferenceOnManagementPort(path, ctx.config.publicGatewayUrl) ?? Errors.noManagementRoute(req.method, path));
    if (allowed.length > 0) reply.header('allow', allowed.join(', '));
    void reply.status(err.status).send(err.toBody());
  });

  addSharedSchemas(app);
  // Before any route: the plugin learns the routes as they are added.
  await registerOpenApi(app);

  registerHealthRoutes(app, ctx);
  registerOpenApiRoute(app);
  await registerDashboard(app);
  registerSigninRoutes(app, ctx);
  registerOidcSigninRoutes(app, ctx);
  registerInternalInvalidationRoutes(app, ctx);
  registerInternalStoredResponseRoutes(app, ctx);
  registerInternalFileRoutes(app, ctx);
  registerInternalBatchRoutes(app, ctx);
  registerInternalBatchSubmissionRoutes(app, ctx);
  // Authenticated by its link's ticket, not a bearer token.
  registerUsageDownloadRoute(app, ctx);
  await app.register(async (authenticated) => {
    // onRequest runs before the body is parsed and validated: no token, no other answer than 401.
    authenticated.addHook('onRequest', requireAuth(ctx));
    registerUserRoutes(authenticated, ctx);
    registerProjectRoutes(authenticated, ctx);
    registerGuardrailRoutes(authenticated, ctx);
    registerProjectCacheRoutes(authenticated, ctx);
    registerMemberRoutes(authenticated, ctx);
    registerKeyRoutes(authenticated, ctx);
    registerUsageRoutes(authenticated, ctx);
    registerAuditRoutes(authenticated, ctx);
    registerWebhookRoutes(authenticated, ctx);
    registerBudgetRoutes(authenticated, ctx);
    registerBatchRoutes(authenticated, ctx);
    registerGatewayRoutes(authenticated, ctx);
  });
  return app;
}

function asGatewayError(err: FastifyError): GatewayError {
  if (err instanceof GatewayError) return err;
  if (err.validation) return validationError(err);
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return Errors.payloadTooLarge();
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return Errors.unsupportedMediaType();
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return Errors.managementBodyNotJson();
  }
  if (err.statusCode === 400) return Errors.managementBodyNotJson();
  return Errors.internal(err);
}

/** "query.limit must be <= 1000", "body.email is required": the failing field first, param set to it. */
function validationError(err: FastifyError): GatewayError {
  const first = err.validation?.[0];
  const where = err.validationContext === 'querystring' ? 'query' : (err.validationContext ?? 'body');
  const params = (first?.params ?? {}) as { missingProperty?: string; additionalProperty?: string; type?: string | string[] };
  const path = first?.instancePath ? first.instancePath.replace(/^\//, '').replace(/\//g, '.') : '';
  let field = path;
  let problem = first?.message ?? 'is invalid';
  if (first?.keyword === 'required' && params.missingProperty !== undefined) {
    field = path ? `${path}.${params.missingProperty}` : params.missingProperty;
    problem = 'is required';
  } else if (first?.keyword === 'additionalProperties' && params.additionalProperty !== undefined) {
    field = path ? `${path}.${params.additionalProperty}` : params.additionalProperty;
    problem = 'is not a known field';
  } else if (first?.keyword === 'type' && params.type !== undefined) {
    problem = `must be ${[params.type].flat().join(' or ')}`;
  }
  return Errors.invalidInput(where, field, problem);
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
