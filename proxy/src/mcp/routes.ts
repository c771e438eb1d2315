import { Errors, GatewayError, requestIdFrom } from '@gateway/shared';
import type { GatewayDeps, RequestInfo } from '../pipeline/context.js';
import { holdBodyForKey, throttledAway } from '../http/auth-gate.js';
import { readBody } from '../http/body-reader.js';
import { Exchange } from '../http/exchange.js';
import type { HttpRequest, HttpResponse, TemplatedApp } from '../http/uws.js';
import { deleteAggregate, postToAggregate } from './aggregate-route.js';
import { errorMessage, gatewayErrorMessage, RPC } from './jsonrpc.js';
import type { McpRequestInfo } from './mcp-request-info.js';
import { McpRequest } from './mcp-request.js';
import type { McpUpstreams } from './mcp-upstreams.js';
import { passToServer, postToServer } from './server-route.js';

/**
 * The MCP gateway's routes: `/mcp/{server}` (one server, passed through) and `/mcp` (every
 * allowed server as one). Headers are read inside the uWebSockets.js callback, the key check
 * starts while the body arrives, and the rest is the route's steps.
 */
/** A refusal before any JSON-RPC message was read: a JSON-RPC error without an id. */
const MCP_ERRORS = {
  errorBody: (err: GatewayError) => gatewayErrorMessage(null, err),
  streamError: (err: GatewayError) => `event: message\ndata: ${gatewayErrorMessage(null, err)}\n\n`,
};

export function registerMcpRoutes(app: TemplatedApp, deps: GatewayDeps, upstreams: McpUpstreams, requestInfo: (res: HttpResponse, req: HttpRequest) => RequestInfo): void {
  const limit = deps.config.maxBodyBytes;

  const start = (res: HttpResponse, req: HttpRequest, server: string | null, method: string): McpRequest | null => {
    // Added to the request info's own object: V8 gives an object spread followed by further
    // properties a slow path (microseconds per property), a copy onto a fresh object it does not.
    const info: McpRequestInfo = Object.assign(requestInfo(res, req), {
      server,
      sessionId: req.getHeader('mcp-session-id'),
      protocolVersion: req.getHeader('mcp-protocol-version'),
      accept: req.getHeader('accept'),
      lastEventId: req.getHeader('last-event-id'),
      traceparent: req.getHeader('traceparent'),
      tracestate: req.getHeader('tracestate'),
    });
    const ex = new Exchange(res, info.requestId);
    // An address over its failed-authentication limit is answered before anything is looked up,
    // as on the model endpoints (the same throttle, counted by both).
    if (deps.authThrottle !== null && throttledAway(deps.authThrottle, deps, ex, info, MCP_ERRORS)) return null;
    const call = new McpRequest(deps, ex, info, method);
    ex.onAbort = () => call.clientGone();
    if (deps.state.draining) {
      call.auth.identify();
      call.fail(Errors.shuttingDown(), 'error');
      return null;
    }
    call.auth.start();
    return call;
  };

  const post = (path: string, serverOf: (req: HttpRequest) => string | null, run: (call: McpRequest, body: Buffer) => Promise<void>) =>
    app.post(path, (res, req) => {
      const declared = Number(req.getHeader('content-length') || '0');
      const call = start(res, req, serverOf(req), 'POST');
      if (call === null) return;
      const tooLarge = () => {
        call.auth.identify();
        call.fail(Errors.bodyTooLarge(limit), 'error');
      };
      if (declared > limit) return tooLarge();
      // A key refused at once (none, malformed, known bad) is answered before the body is read.
      const early = call.auth.result();
      if (early instanceof GatewayError && early.code === 'UNAUTHORIZED') {
        call.admit();
        return;
      }
      readBody(res, limit, (body) => void run(call, body).catch((err: unknown) => call.crashed(err)), tooLarge);
      // A key Redis is asked about: the body stays unread until it answers.
      if (early instanceof Promise) holdBodyForKey(call.ex, early, () => call.finished, () => void call.admit());
    });

  const bodiless = (verb: 'get' | 'del', path: string, method: 'GET' | 'DELETE', serverOf: (req: HttpRequest) => string | null, run: (call: McpRequest) => Promise<void>) =>
    app[verb](path, (res, req) => {
      const call = start(res, req, serverOf(req), method);
      if (call !== null) void run(call).catch((err: unknown) => call.crashed(err));
    });

  const named = (req: HttpRequest) => req.getParameter(0) ?? '';
  post('/mcp/:server', named, (call, body) => postToServer(call, upstreams, body));
  bodiless('get', '/mcp/:server', 'GET', named, (call) => passToServer(call, upstreams, 'GET'));
  bodiless('del', '/mcp/:server', 'DELETE', named, (call) => passToServer(call, upstreams, 'DELETE'));

  post('/mcp', () => null, (call, body) => postToAggregate(call, upstreams, body));
  bodiless('del', '/mcp', 'DELETE', () => null, (call) => deleteAggregate(call, upstreams));
  // The aggregate has no server-initiated stream to offer (it would merge several): MCP's answer is 405.
  app.get('/mcp', (res, req) => {
    const ex = new Exchange(res, requestIdFrom(req.getHeader('x-request-id') || undefined));
    ex.sendWith(405, [['content-type', 'application/json'], ['allow', 'POST, DELETE']], errorMessage(null, RPC.invalidRequest, 'GET is not served on /mcp: it has no server-initiated stream.'));
  });
}
