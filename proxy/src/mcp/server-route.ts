import { Errors, type McpServerAllowance, type ProjectPolicy } from '@gateway/shared';
import { idOf, methodOf, parseBody, toolNameOf, type RequestId } from './jsonrpc.js';
import { judgeMessage } from './message-policy.js';
import { MAX_NAME, type McpRequest } from './mcp-request.js';
import type { McpUpstream, McpUpstreams } from './mcp-upstreams.js';
import { relay, type Rewrite } from './relay.js';
import { admitToolCall } from './tool-admission.js';
import { serverAllowance } from './tool-access.js';

/**
 * `/mcp/{server}`: one MCP server behind the project key, Streamable HTTP passed through (the
 * client's session id and protocol version go to the server, the server's come back). The steps:
 * key → server configured → server allowed for the project → (POST) each message judged
 * (message-policy.ts): a tools/call of a tool not allowed is answered here, an allowed one admitted
 * like a model call; a method, prompt or resource not allowed is answered here → forwarded with the
 * server's own headers → answer relayed (list answers filtered to what the project may use).
 */
interface Allowed {
  upstream: McpUpstream;
  policy: ProjectPolicy;
  allowance: McpServerAllowance;
}

/** What is known in process is used at once: a promise only where the key or policy waits on Redis. */
function allowedServer(req: McpRequest, upstreams: McpUpstreams): Allowed | null | Promise<Allowed | null> {
  const key = req.admit();
  if (key instanceof Promise) return key.then((k) => (k === null ? null : withPolicy(req, upstreams)));
  return key === null ? null : withPolicy(req, upstreams);
}

function withPolicy(req: McpRequest, upstreams: McpUpstreams): Allowed | null | Promise<Allowed | null> {
  const policy = req.policy();
  if (policy instanceof Promise) return policy.then((p) => (p === null ? null : serverFor(req, upstreams, p)));
  return policy === null ? null : serverFor(req, upstreams, policy);
}

function serverFor(req: McpRequest, upstreams: McpUpstreams, policy: ProjectPolicy): Allowed | null {
  const allowance = serverAllowance(policy.mcp, req.server);
  const upstream = upstreams.get(req.server);
  // 403 for a server the project may not use whether or not the gateway serves it: a project learns
  // nothing of the configured names beyond its own setting's.
  if (allowance === null) {
    req.fail(policy.mcp ? Errors.mcpServerNotEnabled(req.server) : Errors.mcpNotEnabled(), 'policy_blocked');
    return null;
  }
  if (upstream === undefined) {
    req.fail(Errors.mcpServerUnknown(req.server), 'error');
    return null;
  }
  return { upstream, policy, allowance };
}

export async function postToServer(req: McpRequest, upstreams: McpUpstreams, raw: Buffer): Promise<void> {
  const found = allowedServer(req, upstreams);
  const allowed = found instanceof Promise ? await found : found;
  if (allowed === null) return;
  const { upstream, policy, allowance } = allowed;
  const body = parseBody(raw);
  if (body === null) return req.fail(Errors.mcpNotJsonRpc(), 'error');
  const message = body.message;
  const filters = new Map<RequestId, (result: Record<string, unknown>) => Record<string, unknown>>();
  if (message === null) {
    req.method = 'batch';
    // One call, one admission and one record: a batch cannot carry a tool call.
    if (body.batch!.some((m) => methodOf(m) === 'tools/call')) {
      return req.fail(Errors.mcpBatchWithToolCall(), 'error');
    }
    // Every message of a batch is judged as if sent alone; one refused refuses the batch, so no
    // part of it reaches the server.
    const ids = new Set<RequestId>();
    for (const m of body.batch!) {
      // Answers are matched to their filter by id: two requests with one id could swap filters.
      const id = methodOf(m) === null ? null : idOf(m);
      if (id !== null) {
        if (ids.has(id)) return req.fail(Errors.mcpBatchIdTwice(id), 'error');
        ids.add(id);
      }
      const verdict = judgeMessage(m, allowance);
      if (verdict.kind === 'refuse') return req.fail(Errors.mcpRefusedInBatch(verdict.error), 'policy_blocked');
      if (verdict.kind === 'filter') filters.set(verdict.id, verdict.filter);
    }
  } else {
    const method = methodOf(message);
    req.method = method === null ? 'response' : method.slice(0, MAX_NAME);
    if (method !== null) req.rpcId = idOf(message);
    if (method === 'tools/call') {
      const tool = toolNameOf(message);
      if (tool === null) return req.fail(Errors.toolCallWithoutName(), 'error');
      req.tool = tool.slice(0, MAX_NAME);
      const admitted = admitToolCall(req, policy, allowance, tool, tool, upstream.pricePerCall, message);
      if (!(admitted instanceof Promise ? await admitted : admitted)) return;
    } else {
      const verdict = judgeMessage(message, allowance);
      if (verdict.kind === 'refuse') {
        // A request is answered in JSON-RPC, as a server would; a notification has no answer, so an HTTP error.
        if (req.rpcId !== null) return req.refuseCall(verdict.error, verdict.rpcCode);
        return req.fail(verdict.error, 'policy_blocked');
      }
      if (verdict.kind === 'filter') filters.set(verdict.id, verdict.filter);
    }
  }
  const rewrite: Rewrite | null =
    filters.size === 0
      ? null
      : (m) => {
          const filter = (typeof m.id === 'string' || typeof m.id === 'number') && !('method' in m) ? filters.get(m.id) : undefined;
          return filter !== undefined && typeof m.result === 'object' && m.result !== null && !Array.isArray(m.result) ? { ...m, result: filter(m.result as Record<string, unknown>) } : m;
        };
  const { info } = req;
  await relay(
    req,
    upstream,
    {
      method: 'POST',
      sessionId: info.sessionId,
      protocolVersion: info.protocolVersion,
      accept: info.accept || 'application/json, text/event-stream',
      // The client's bytes, unless a guardrail masked the call's arguments.
      body: req.argumentsMasked && message !== null ? JSON.stringify(message) : raw,
      traceparent: req.trace?.traceparent,
      cancel: req.cancel,
    },
    rewrite,
  );
}

/** GET (the server-initiated stream) and DELETE (the session's end): passed through once allowed. */
export async function passToServer(req: McpRequest, upstreams: McpUpstreams, method: 'GET' | 'DELETE'): Promise<void> {
  const found = allowedServer(req, upstreams);
  const allowed = found instanceof Promise ? await found : found;
  if (allowed === null) return;
  const { info } = req;
  await relay(
    req,
    allowed.upstream,
    { method, sessionId: info.sessionId, protocolVersion: info.protocolVersion, accept: method === 'GET' ? 'text/event-stream' : info.accept || 'application/json, text/event-stream', lastEventId: info.lastEventId, cancel: req.cancel },
    null,
  );
}
