import { clientAddress, Errors, requestIdFrom, type TrustedProxies } from '@gateway/shared';
import { RequestContext, type GatewayDeps, type RequestInfo } from '../pipeline/context.js';
import type { Endpoint } from '../pipeline/endpoint.js';
import { buildEndpoints, type Endpoints } from '../pipeline/endpoints.js';
import { attribute } from '../attribution/attribute.js';
import { budgets } from '../pipeline/steps/budgets.js';
import { guardrailsIn } from '../guardrails/input-step.js';
import { guardrailsOut } from '../guardrails/output-step.js';
import { cacheSeams } from '../cache/cache-steps.js';
import type { ErrorShape } from '../protocols/protocol.js';
import type { McpUpstreams } from '../mcp/mcp-upstreams.js';
import { registerMcpRoutes } from '../mcp/routes.js';
import { missingKeyError } from '../auth/key-hints.js';
import { throttledAway } from './auth-gate.js';
import { Cors } from './cors.js';
import { Exchange } from './exchange.js';
import { peerAddressText } from './peer-address.js';
import { NAME } from './wire-bytes.js';
import { proxyPortError } from '../startup-errors.js';
import { loadUws, type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket } from './uws.js';

/**
 * Routes of the data plane. Everything the request line and headers say is read synchronously in
 * the uWebSockets.js callback (the request object dies when it returns); the rest is the
 * endpoint's chain of steps (pipeline/endpoints.ts).
 */
export interface ProxyServer {
  app: TemplatedApp;
  port: number;
  /** The endpoints' chains as built (a batch's lines run through the same ones). */
  endpoints: Endpoints;
  /** Stops accepting connections; requests in flight go on. */
  stopListening(): void;
}

export interface HealthProbe {
  ready(): boolean;
}

const BEARER = /^Bearer\s+(.+)$/i;

/** application/json, or a JSON suffix type; an absent content-type is taken as JSON (curl, old SDKs). */
function declaresJson(contentType: string): boolean {
  if (contentType === '' || contentType === 'application/json') return true;
  const type = contentType.split(';', 1)[0]!.trim().toLowerCase();
  return type === 'application/json' || type.endsWith('+json');
}

/**
 * Headers a native request never passes on (NativeRequest.headers): the connection's and the
 * body's own (the gateway's client makes them), every credential (the gateway's key, cookies;
 * OpenAI's account headers, which would choose whose account the operator's key bills), the
 * gateway's own (its tags, request id, cache directive, trace context) and what says where the
 * client is (forwarding chains, origin, the browser's fetch metadata).
 */
const NOT_PASSED = new Set([
  'host', 'connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'expect',
  'content-length', 'content-type', 'content-encoding', 'accept', 'accept-encoding', 'accept-language', 'user-agent',
  'authorization', 'proxy-authorization', 'x-api-key', 'api-key', 'cookie', 'openai-organization', 'openai-project',
  'x-request-id', 'cache-control', 'pragma', 'traceparent', 'tracestate', 'baggage',
  'forwarded', 'x-real-ip', 'via', 'origin', 'referer',
]);

/** A header name that says it carries a credential. */
const CREDENTIAL = /(^|-)(key|token|secret|password|passwd|auth|credentials?)(-|$)/;

/**
 * The client's headers a native request passes on to the provider of its protocol: every one
 * not above, so a header the provider adds tomorrow (a beta, an agent's session or turn header,
 * an SDK's) reaches it today. Each adapter passes on what its provider speaks (docs/endpoints.md).
 */
function providerHeadersOf(req: HttpRequest): [string, string][] | null {
  let found: [string, string][] | null = null;
  req.forEach((name, value) => {
    if (NOT_PASSED.has(name) || name.startsWith('x-gateway-') || name.startsWith('x-forwarded-') || name.startsWith('sec-') || name.startsWith('access-control-')) return;
    // A credential of some other service (x-goog-api-key, x-amz-security-token…) goes to no provider.
    if (CREDENTIAL.test(name)) return;
    (found ??= []).push([name, value]);
  });
  return found;
}

function requestInfo(res: HttpResponse, req: HttpRequest, trusted: TrustedProxies, native = false, withId = false, batchRoute = false): RequestInfo {
  let apiKey = req.getHeader(NAME.apiKey);
  if (apiKey === '') {
    const match = BEARER.exec(req.getHeader(NAME.authorization));
    apiKey = match?.[1]?.trim() ?? '';
  }
  const clientId = req.getHeader(NAME.requestId);
  const requestId = requestIdFrom(clientId || undefined);
  return {
    requestId,
    clientRequestId: requestId === clientId,
    apiKey,
    // Only on the refusal path: what the headers held instead of a key.
    missingKey: apiKey === '' ? missingKeyError(req.getHeader(NAME.authorization), req.getHeader('api-key')) : null,
    clientIp: clientIp(res, req, trusted),
    userAgent: req.getHeader(NAME.userAgent),
    jsonBody: declaresJson(req.getHeader(NAME.contentType)),
    contentLength: Number(req.getHeader(NAME.contentLength) || '0'),
    tags: req.getHeader(NAME.gatewayTags),
    cacheControl: req.getHeader(NAME.cacheControl),
    providerHeaders: native ? providerHeadersOf(req) : null,
    query: native || withId ? (req.getQuery() ?? '') : '',
    pathId: withId ? pathParameter(req.getParameter(0) ?? '') : '',
    keyHash: null,
    contentType: batchRoute ? req.getHeader(NAME.contentType) : '',
    host: batchRoute ? req.getHeader('host') : '',
  };
}

/** A path parameter decoded; one that is not valid percent-encoding stays as sent (no id matches it). */
function pathParameter(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** The TCP peer, or, behind trusted proxies (TRUST_PROXY), the client X-Forwarded-For names. */
function clientIp(res: HttpResponse, req: HttpRequest, trusted: TrustedProxies): string {
  const peer = peerAddressText(res.getRemoteAddress());
  if (trusted.entries.length === 0) return peer;
  return clientAddress(peer, req.getHeader('x-forwarded-for') || undefined, trusted);
}

export function startProxyServer(deps: GatewayDeps, health: HealthProbe, host: string, port: number, mcp: McpUpstreams | null = null): Promise<ProxyServer> {
  const uws = loadUws();
  const app = uws.App();
  const endpoints = buildEndpoints({ tags: attribute, budgets, ...(deps.guardrails === undefined ? {} : { guardrailsIn, guardrailsOut }), ...(deps.responseCache ? cacheSeams(deps.responseCache) : {}) });
  const routes: readonly (readonly [method: 'post' | 'get' | 'del', path: string, endpoint: Endpoint])[] = [
    ['post', '/v1/chat/completions', endpoints.chatCompletions],
    ['post', '/v1/responses', endpoints.responses],
    ['post', '/v1/messages', endpoints.messages],
    ['post', '/v1/messages/count_tokens', endpoints.countTokens],
    ['post', '/v1/embeddings', endpoints.embeddings],
    ['get', '/v1/models', endpoints.models],
    ['get', '/v1/responses/:id', endpoints.retrieveResponse],
    ['del', '/v1/responses/:id', endpoints.deleteResponse],
    ['get', '/v1/responses/:id/input_items', endpoints.listInputItems],
    ['post', '/v1/files', endpoints.batches.uploadFile],
    ['get', '/v1/files', endpoints.batches.listFiles],
    ['get', '/v1/files/:id', endpoints.batches.retrieveFile],
    ['del', '/v1/files/:id', endpoints.batches.deleteFile],
    ['get', '/v1/files/:id/content', endpoints.batches.fileContent],
    ['post', '/v1/batches', endpoints.batches.createBatch],
    ['get', '/v1/batches', endpoints.batches.listBatches],
    ['get', '/v1/batches/:id', endpoints.batches.retrieveBatch],
    ['post', '/v1/batches/:id/cancel', endpoints.batches.cancelBatch],
    ['post', '/v1/messages/batches', endpoints.batches.createMessageBatch],
    ['get', '/v1/messages/batches', endpoints.batches.listMessageBatches],
    ['get', '/v1/messages/batches/:id', endpoints.batches.retrieveMessageBatch],
    ['get', '/v1/messages/batches/:id/results', endpoints.batches.messageBatchResults],
    ['post', '/v1/messages/batches/:id/cancel', endpoints.batches.cancelMessageBatch],
    ['del', '/v1/messages/batches/:id', endpoints.batches.deleteMessageBatch],
  ];
  const errorShapes = new Map<string, ErrorShape>(routes.map(([, path, endpoint]) => [path, endpoint.errors]));
  // Browser access, decided here once: unset, no preflight route and no header on any answer.
  const cors = deps.config.cors === null ? null : new Cors(deps.config.cors);
  const exchange: (res: HttpResponse, req: HttpRequest, requestId: string) => Exchange =
    cors === null
      ? (res, _req, requestId) => new Exchange(res, requestId)
      : (res, req, requestId) => {
          const ex = new Exchange(res, requestId);
          ex.cors = cors.forOrigin(req.getHeader(NAME.origin));
          return ex;
        };
  if (cors !== null) app.options('/*', (res, req) => cors.preflight(res, req, (err) => endpoints.chatCompletions.errors.errorBody(err)));
  // Null unless AUTH_FAILURE_LIMIT > 0: then an address over its limit is answered 429 before a request exists.
  const throttle = deps.authThrottle;

  for (const [method, path, endpoint] of routes) {
    const verb = method === 'del' ? 'DELETE' : method.toUpperCase();
    const withId = path.includes('/:id');
    app[method](path, (res, req) => {
      const info = requestInfo(res, req, deps.config.trustProxy, endpoint.native === true, withId, endpoint.batchRoute === true);
      const ex = exchange(res, req, info.requestId);
      if (throttle !== null && throttledAway(throttle, deps, ex, info, endpoint.errors)) return;
      const ctx = new RequestContext(deps, ex, info, endpoint);
      if (deps.tracer !== null) ctx.trace = deps.tracer.start(ctx, req, verb, path);
      ex.onAbort = () => ctx.clientGone();
      ctx.run();
    });
  }

  // The MCP gateway (mcp/routes.ts): its own steps, sharing only the request's header reading.
  if (mcp !== null) registerMcpRoutes(app, deps, mcp, (res, req) => requestInfo(res, req, deps.config.trustProxy));

  app.get('/healthz', (res) => {
    res.writeHeader('content-type', 'application/json').end('{"status":"ok"}');
  });

  app.get('/readyz', (res) => {
    const ready = health.ready() && !deps.state.draining;
    res
      .writeStatus(ready ? '200 OK' : '503 Service Unavailable')
      .writeHeader('content-type', 'application/json')
      .end(JSON.stringify({ status: ready ? 'ready' : deps.state.draining ? 'draining' : 'unavailable' }));
  });

  app.any('/*', (res, req) => {
    const method = req.getMethod();
    const url = req.getUrl();
    // A known path answers in its own protocol's error shape.
    const shape = errorShapes.get(url);
    const err = shape !== undefined ? Errors.methodNotAllowed(method.toUpperCase(), url) : Errors.noRoute(method.toUpperCase(), url);
    const ex = exchange(res, req, requestIdFrom(req.getHeader('x-request-id') || undefined));
    ex.send(err.status, 'application/json', (shape ?? endpoints.chatCompletions.errors).errorBody(err), undefined, false, method === 'head');
  });

  return new Promise((resolve, reject) => {
    app.listen(host, port, (socket: us_listen_socket | false) => {
      if (!socket) return reject(proxyPortError(host, port));
      let listening: us_listen_socket | null = socket;
      resolve({
        app,
        endpoints,
        port: uws.us_socket_local_port(socket),
        stopListening: () => {
          if (listening !== null) uws.us_listen_socket_close(listening);
          listening = null;
        },
      });
    });
  });
}
