import { createSseDecoder, Errors, type GatewayError, type SseEvent } from '@gateway/shared';
import { answerOf } from './jsonrpc.js';
import type { McpRequest } from './mcp-request.js';
import { headerOf, type McpUpstream, type UpstreamAnswer, type UpstreamRequest } from './mcp-upstreams.js';

/**
 * Sends a request to an MCP server and relays its answer: a JSON body as one response, an SSE
 * stream event by event (with backpressure), the server's status, content type and session id
 * kept. Bytes pass as they came unless `rewrite` changes messages (a filtered tools/list); the
 * stream of a tools/call is watched, not changed, to learn how the tool answered.
 */
export type Rewrite = (message: Record<string, unknown>) => Record<string, unknown>;

const SSE = 'text/event-stream';

export async function relay(req: McpRequest, upstream: McpUpstream, request: UpstreamRequest, rewrite: Rewrite | null): Promise<void> {
  // On /mcp the client's session is the gateway's own: a server's session id must not replace it.
  const passSession = req.info.server !== null;
  req.upstream = upstream;
  req.upstreamSession = request.sessionId;
  req.upstreamProtocol = request.protocolVersion;
  req.reached = true;
  let res: UpstreamAnswer;
  try {
    res = await upstream.send(request);
  } catch (err) {
    if (req.finished) return;
    const code = (err as { code?: string }).code;
    // Refused before anything was sent: the server never saw the call.
    if (code === 'ECONNREFUSED' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ENOTFOUND') req.reached = false;
    req.fail(upstreamFailure(upstream, err), 'error');
    return;
  }
  if (req.finished) {
    res.destroy();
    return;
  }
  const status = res.status;
  if (status === 401 || status === 403) {
    // The server refused the gateway's own credentials (its configured headers): a gateway
    // fault, not the client's, and the client must not be sent looking for a sign-in.
    res.destroy();
    req.fail(Errors.mcpServerRefusedCredentials(upstream.name, status), 'error');
    return;
  }
  const type = headerOf(res, 'content-type');
  const headers: [string, string][] = [];
  const session = headerOf(res, 'mcp-session-id');
  if (session !== '' && passSession) headers.push(['mcp-session-id', session]);
  const allow = headerOf(res, 'allow');
  if (allow !== '') headers.push(['allow', allow]);
  if (type.startsWith(SSE)) return relayStream(req, res, status, headers, rewrite);
  return relayBody(req, res, status, type, headers, rewrite);
}

async function relayBody(req: McpRequest, res: UpstreamAnswer, status: number, type: string, headers: [string, string][], rewrite: Rewrite | null): Promise<void> {
  let body: Buffer;
  try {
    body = await res.body();
  } catch (err) {
    if (!req.finished) req.fail(upstreamFailure(req.upstream!, err), 'error');
    return;
  }
  if (req.finished) return;
  if (type !== '') headers.push(['content-type', type]);
  const watch = rewrite !== null || (req.rpcId !== null && req.tool !== null);
  if (watch && body.length > 0 && type.startsWith('application/json')) {
    try {
      const parsed: unknown = JSON.parse(body.toString('utf8'));
      const messages = Array.isArray(parsed) ? parsed : [parsed];
      let changed = false;
      const out = messages.map((m: unknown) => {
        see(req, m);
        if (rewrite === null || typeof m !== 'object' || m === null) return m;
        changed = true;
        return rewrite(m as Record<string, unknown>);
      });
      if (changed) body = Buffer.from(JSON.stringify(Array.isArray(parsed) ? out : out[0]));
    } catch {
      // Not JSON after all: relayed as it came, the client's to judge.
    }
  }
  req.ex.sendWith(status, headers, body);
  finishRelayed(req, status);
}

async function relayStream(req: McpRequest, res: UpstreamAnswer, status: number, headers: [string, string][], rewrite: Rewrite | null): Promise<void> {
  const { ex } = req;
  req.streamed = true;
  headers.push(['content-type', 'text/event-stream'], ['cache-control', 'no-cache']);
  ex.startStreamWith(status, headers);
  // A server-initiated stream (GET) may stay silent: a comment sends the headers now.
  if (req.method === 'GET') ex.write(': stream open\n\n');
  const watch = req.rpcId !== null;
  let out = '';
  const decoder =
    watch || rewrite !== null
      ? createSseDecoder((event: SseEvent) => {
          let message: unknown = null;
          try {
            message = JSON.parse(event.data);
          } catch {
            // Not a JSON-RPC message: passed on untouched.
          }
          if (watch) see(req, message);
          if (rewrite !== null) out += frame(event, message !== null && typeof message === 'object' ? JSON.stringify(rewrite(message as Record<string, unknown>)) : event.data);
        })
      : null;
  const text = decoder === null ? null : new TextDecoder();
  try {
    for await (const chunk of res.stream()) {
      if (req.finished) break;
      decoder?.feed(text!.decode(chunk, { stream: true }));
      let ok: boolean;
      if (rewrite === null) ok = ex.write(chunk);
      else {
        ok = out === '' || ex.write(out);
        out = '';
      }
      if (!ok) await ex.drain();
    }
  } catch (err) {
    if (!req.finished) req.fail(upstreamFailure(req.upstream!, err), 'error');
    return;
  }
  if (req.finished) {
    res.destroy();
    return;
  }
  ex.endStream();
  finishRelayed(req, status);
}

/** Notes the answer to the pending request when `message` is it; a later revocation then has nothing to answer. */
function see(req: McpRequest, message: unknown): void {
  if (req.rpcId === null) return;
  const answer = answerOf(message, req.rpcId);
  if (answer === null) return;
  req.answer = answer;
  req.rpcId = null;
}

function finishRelayed(req: McpRequest, status: number): void {
  if (status >= 400) {
    // The server refused the request itself (an expired session, a bad message): the call failed.
    if (req.answer === null) req.answer = 'error';
    req.finish('error', status, null);
    return;
  }
  req.finish(req.answer === 'error' ? 'error' : 'success', status, null);
}

/** One SSE event re-framed with its id and type; data of several lines keeps its lines. */
function frame(event: SseEvent, data: string): string {
  let out = '';
  if (event.id !== undefined) out += `id: ${event.id}\n`;
  if (event.event !== undefined) out += `event: ${event.event}\n`;
  for (const line of data.split('\n')) out += `data: ${line}\n`;
  return `${out}\n`;
}

function upstreamFailure(upstream: McpUpstream, err: unknown): GatewayError {
  const code = (err as { code?: string }).code;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
    return Errors.mcpServerTimedOut(upstream.name);
  }
  return Errors.mcpServerUnreachable(upstream.name);
}
