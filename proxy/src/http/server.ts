import { clientAddress, GatewayError, requestIdFrom, type TrustedProxies } from '@gateway/shared';
import { EmbeddingsCall } from '../chat/embeddings-call.js';
import { InferenceCall } from '../chat/inference-call.js';
import { openAiChat } from '../protocols/openai-chat/openai-chat.js';
import { openAiResponses } from '../protocols/openai-responses/openai-responses.js';
import { anthropicMessages } from '../protocols/anthropic-messages/anthropic-messages.js';
import { CountTokensCall } from '../chat/count-tokens-call.js';
import type { ErrorShape, InboundProtocol } from '../protocols/protocol.js';
import { Cors } from './cors.js';
import { missingKeyMessage } from '../auth/key-hints.js';
import { holdBodyForKey, refusedBeforeBody, throttledAway } from './auth-gate.js';
import type { GatewayCall, GatewayDeps, RequestInfo } from '../chat/gateway-call.js';
import { ModelsCall } from '../chat/models-call.js';
import { readBody } from './body-reader.js';
import { Exchange } from './exchange.js';
import { proxyPortError } from '../startup-errors.js';
import { loadUws, type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket } from './uws.js';

/**
 * Routes of the data plane. Everything the request line and headers say is read synchronously in
 * the uWebSockets.js callback (the request object dies when it returns); the rest is the calls'.
 */
export interface ProxyServer {
  app: TemplatedApp;
  port: number;
  /** Stops accepting connections; requests in flight go on. */
  stopListening(): void;
}

export interface HealthProbe {
  ready(): boolean;
}

const BEARER = /^Bearer\s+(.+)$/i;

/** Inference endpoints and the protocol each speaks. */
const INFERENCE_ROUTES: readonly (readonly [string, InboundProtocol])[] = [
  ['/v1/chat/completions', openAiChat],
  ['/v1/responses', openAiResponses],
  ['/v1/messages', anthropicMessages],
];

/** Anthropic's token counting, answered by the gateway itself. */
const COUNT_TOKENS = '/v1/messages/count_tokens';

/** A call that reads a JSON body: every inference endpoint, and token counting. */
type BodyCall = GatewayCall & { clientGone(): void; tooLarge(): void; onBody(raw: Buffer): Promise<void> };

const EMBEDDINGS_PATH = '/v1/embeddings';

/** application/json, or a JSON suffix type; an absent content-type is taken as JSON (curl, old SDKs). */
function declaresJson(contentType: string): boolean {
  if (contentType === '') return true;
  const type = contentType.split(';', 1)[0]!.trim().toLowerCase();
  return type === 'application/json' || type.endsWith('+json');
}

function requestInfo(res: HttpResponse, req: HttpRequest, trusted: TrustedProxies): RequestInfo {
  let apiKey = req.getHeader('x-api-key');
  if (apiKey === '') {
    const match = BEARER.exec(req.getHeader('authorization'));
    apiKey = match?.[1]?.trim() ?? '';
  }
  const clientId = req.getHeader('x-request-id');
  const requestId = requestIdFrom(clientId || undefined);
  return {
    requestId,
    clientRequestId: requestId === clientId,
    apiKey,
    // Only on the refusal path: what the headers held instead of a key.
    missingKey: apiKey === '' ? missingKeyMessage(req.getHeader('authorization'), req.getHeader('api-key')) : null,
    clientIp: clientIp(res, req, trusted),
    userAgent: req.getHeader('user-agent'),
    jsonBody: declaresJson(req.getHeader('content-type')),
  };
}

/** The TCP peer, or, behind trusted proxies (TRUST_PROXY), the client X-Forwarded-For names. */
function clientIp(res: HttpResponse, req: HttpRequest, trusted: TrustedProxies): string {
  const peer = asciiText(res.getRemoteAddressAsText());
  if (trusted.entries.length === 0) return peer;
  return clientAddress(peer, req.getHeader('x-forwarded-for') || undefined, trusted);
}

/** An address's text: ASCII, so latin1 (a straight byte copy) rather than a UTF-8 decode. */
function asciiText(bytes: ArrayBuffer): string {
  return Buffer.from(bytes).toString('latin1');
}

export function startProxyServer(deps: GatewayDeps, health: HealthProbe, host: string, port: number): Promise<ProxyServer> {
  const uws = loadUws();
  const app = uws.App();
  const limit = deps.config.maxBodyBytes;
  // Browser access, decided here once: unset, no preflight route and no header on any answer.
  const cors = deps.config.cors === null ? null : new Cors(deps.config.cors);
  const exchange = (res: HttpResponse, req: HttpRequest, requestId: string): Exchange => {
    const ex = new Exchange(res, requestId);
    if (cors !== null) ex.cors = cors.forOrigin(req.getHeader('origin'));
    return ex;
  };
  if (cors !== null) app.options('/*', (res, req) => cors.preflight(res, req, (err) => openAiChat.errorBody(err)));

  const refuseWhileDraining = (ex: Exchange, call: GatewayCall): boolean => {
    if (!deps.state.draining) return false;
    call.identify();
    call.fail(new GatewayError('UNAVAILABLE', 'The gateway is shutting down; retry.', { retryAfter: 1 }), 'error');
    return true;
  };

  /** A POST endpoint with a body: key check while it arrives, then the call's own work. */
  const withBody = (path: string, shape: ErrorShape, newCall: (ex: Exchange, info: RequestInfo) => BodyCall) =>
    app.post(path, (res, req) => {
      const info = requestInfo(res, req, deps.config.trustProxy);
      const declared = Number(req.getHeader('content-length') || '0');
      const ex = exchange(res, req, info.requestId);
      if (throttledAway(deps, ex, info, shape)) return;
      const call = newCall(ex, info);
      if (deps.tracer !== null) call.trace = deps.tracer.start(call, req, 'POST', path);
      ex.onAbort = () => call.clientGone();
      if (refuseWhileDraining(ex, call)) return;
      call.authenticate();
      const refused = refusedBeforeBody(call);
      if (refused === true) return;
      if (declared > limit) return call.tooLarge();
      readBody(
        res,
        limit,
        (body) => void call.onBody(body).catch((err: unknown) => call.crashed(err)),
        () => call.tooLarge(),
      );
      if (refused !== false) holdBodyForKey(ex, call, refused);
    });
  // A model endpoint: the same path for every inbound protocol, which only parses and renders.
  for (const [path, protocol] of INFERENCE_ROUTES) withBody(path, protocol, (ex, info) => new InferenceCall(deps, ex, info, protocol));
  withBody(COUNT_TOKENS, anthropicMessages, (ex, info) => new CountTokensCall(deps, ex, info));
  withBody(EMBEDDINGS_PATH, openAiChat, (ex, info) => new EmbeddingsCall(deps, ex, info));

  app.get('/v1/models', (res, req) => {
    const info = requestInfo(res, req, deps.config.trustProxy);
    const ex = exchange(res, req, info.requestId);
    if (throttledAway(deps, ex, info, openAiChat)) return;
    const call = new ModelsCall(deps, ex, info);
    if (deps.tracer !== null) call.trace = deps.tracer.start(call, req, 'GET', '/v1/models');
    ex.onAbort = () => call.clientGone();
    if (refuseWhileDraining(ex, call)) return;
    call.authenticate();
    void call.run().catch((err: unknown) => call.crashed(err));
  });

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
    const shape = url === COUNT_TOKENS ? anthropicMessages : INFERENCE_ROUTES.find(([path]) => path === url)?.[1];
    const known = url === '/v1/models' || url === EMBEDDINGS_PATH || shape !== undefined;
    const err = known
      ? new GatewayError('METHOD_NOT_ALLOWED', `${method.toUpperCase()} is not allowed on ${url}.`)
      : new GatewayError('NOT_FOUND', `No route for ${method.toUpperCase()} ${url}.`);
    const ex = exchange(res, req, requestIdFrom(req.getHeader('x-request-id') || undefined));
    ex.send(err.status, 'application/json', (shape ?? openAiChat).errorBody(err));
  });

  return new Promise((resolve, reject) => {
    app.listen(host, port, (socket: us_listen_socket | false) => {
      if (!socket) return reject(proxyPortError(host, port));
      let listening: us_listen_socket | null = socket;
      resolve({
        app,
        port: uws.us_socket_local_port(socket),
        stopListening: () => {
          if (listening !== null) uws.us_listen_socket_close(listening);
          listening = null;
        },
      });
    });
  });
}
