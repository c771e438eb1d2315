import { Errors, type McpSetting, type ProjectPolicy } from '@gateway/shared';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { Cancel } from '../providers/cancel.js';
import { decodeSession, encodeSession, type AggregateSession } from './aggregate-session.js';
import { errorMessage, idOf, methodOf, parseBody, resultMessage, RPC, toolNameOf } from './jsonrpc.js';
import { MAX_NAME, type McpRequest } from './mcp-request.js';
import type { McpUpstream, McpUpstreams } from './mcp-upstreams.js';
import { relay } from './relay.js';
import { admitToolCall } from './tool-admission.js';
import { judgeNotification } from './message-policy.js';
import { filterToolsResult, serverAllowance } from './tool-access.js';
import { upstreamRpc } from './upstream-rpc.js';

/**
 * `/mcp`: every server the project may use, as one MCP server whose tools are named
 * `<server>__<tool>`. The gateway answers initialize (having initialized each server), tools/list
 * (each server's allowed tools, renamed) and ping itself; a tools/call goes to its server under the
 * tool's own name, its answer relayed as it comes; notifications go to every server. The session
 * lives in its id (aggregate-session.ts), so any replica serves any request of it. The gateway's
 * own short exchanges with the servers (initialize, list, notifications) each get their own Cancel:
 * one Cancel follows one exchange.
 */
const SEPARATOR = '__';
/** Pages of one server's tools/list followed before the rest is left out. */
const MAX_LIST_PAGES = 20;
const JSON_TYPE = [['content-type', 'application/json']] as const;
const GATEWAY_INFO = { name: 'model-gateway', version: '1.0.0' };

/** The configured servers the project may use, in the setting's order. */
function usable(setting: McpSetting, upstreams: McpUpstreams): McpUpstream[] {
  const out: McpUpstream[] = [];
  for (const name of Object.keys(setting.servers)) {
    const upstream = upstreams.get(name);
    if (upstream !== undefined) out.push(upstream);
  }
  return out;
}

async function setting(req: McpRequest): Promise<{ policy: ProjectPolicy; mcp: McpSetting } | null> {
  if ((await req.admit()) === null) return null;
  const policy = await req.policy();
  if (policy === null) return null;
  if (!policy.mcp) {
    req.fail(Errors.mcpNotEnabled(), 'policy_blocked');
    return null;
  }
  return { policy, mcp: policy.mcp };
}

async function session(req: McpRequest, upstreams: McpUpstreams): Promise<AggregateSession | null> {
  const found = await decodeSession(req.info.sessionId, req.projectId, req.keyId, upstreams.sessions);
  if (found === null) {
    // MCP's answer to an unknown session: 404, and the client initializes again.
    req.fail(req.info.sessionId === '' ? Errors.mcpSessionRequired() : Errors.mcpSessionUnknown(), 'error');
  }
  return found;
}

export async function postToAggregate(req: McpRequest, upstreams: McpUpstreams, raw: Buffer): Promise<void> {
  const allowed = await setting(req);
  if (allowed === null) return;
  const { policy, mcp } = allowed;
  const body = parseBody(raw);
  if (body === null || body.message === null) return req.fail(Errors.mcpNotOneMessage(), 'error');
  const message = body.message;
  const method = methodOf(message);
  req.method = method === null ? 'response' : method.slice(0, MAX_NAME);
  if (method !== null) req.rpcId = idOf(message);
  if (method === 'initialize') return initialize(req, upstreams, usable(mcp, upstreams), message);
  const current = await session(req, upstreams);
  if (current === null || req.finished) return;
  // A notification, or the client's answer to a server's request (which server asked is not known
  // here; the others ignore an answer to nothing): every server of the session gets it.
  if (method === null || req.rpcId === null) {
    const verdict = method === null ? null : judgeNotification(method);
    if (verdict?.kind === 'refuse') return req.fail(verdict.error, 'policy_blocked');
    return notifyAll(req, upstreams, current, mcp, message);
  }
  switch (method) {
    case 'ping':
      return answer(req, {});
    case 'tools/list':
      return listTools(req, upstreams, current, mcp);
    case 'tools/call':
      return callTool(req, upstreams, current, policy, message);
    default:
      req.ex.sendWith(200, JSON_TYPE, errorMessage(req.rpcId, RPC.methodNotFound, `Method not found: ${method} (the gateway's /mcp serves tools).`));
      req.finish('error', 200, 'INVALID_REQUEST');
  }
}

function answer(req: McpRequest, result: unknown): void {
  req.ex.sendWith(200, JSON_TYPE, resultMessage(req.rpcId!, result));
  req.finish('success', 200, null);
}

function accepted(req: McpRequest): void {
  // 202: the answer to a notification or a response (Streamable HTTP).
  req.ex.sendWith(202, [], '');
  req.finish('success', 202, null);
}

/** Initializes every usable server with the client's own parameters; a server that fails is left out of the session. */
async function initialize(req: McpRequest, upstreams: McpUpstreams, servers: McpUpstream[], message: Record<string, unknown>): Promise<void> {
  const outcomes = await Promise.all(
    servers.map((upstream) =>
      upstreamRpc(upstream, message, { sessionId: '', protocolVersion: '' }, new Cancel()).then(
        (outcome) => ({ upstream, outcome }),
        () => ({ upstream, outcome: null }),
      ),
    ),
  );
  if (req.finished) return;
  const sessions = new Map<string, { sessionId: string; protocolVersion: string }>();
  const requested = (message.params as { protocolVersion?: unknown } | undefined)?.protocolVersion;
  let version = typeof requested === 'string' ? requested : '';
  let agreed = false;
  for (const { upstream, outcome } of outcomes) {
    const result = outcome?.message?.result as { protocolVersion?: unknown } | undefined;
    if (outcome === null || result === undefined || typeof result.protocolVersion !== 'string') {
      req.deps.log.warn({ mcp_server: upstream.name, status: outcome?.status ?? null }, 'MCP server did not initialize; left out of the session');
      continue;
    }
    sessions.set(upstream.name, { sessionId: outcome.sessionId, protocolVersion: result.protocolVersion });
    // The version the servers speak: the client's when one accepted it, else the first server's.
    if (!agreed && (result.protocolVersion === requested || version === '')) {
      version = result.protocolVersion;
      agreed = result.protocolVersion === requested;
    }
  }
  const id = encodeSession({ project: req.projectId, key: req.keyId, servers: sessions }, upstreams.sessions);
  const result = { protocolVersion: version, capabilities: { tools: { listChanged: false } }, serverInfo: GATEWAY_INFO };
  req.ex.sendWith(200, [...JSON_TYPE, ['mcp-session-id', id]], resultMessage(req.rpcId!, result));
  req.finish('success', 200, null);
}

/** A notification (initialized, cancelled, …) goes to every server of the session the project may still use. */
async function notifyAll(req: McpRequest, upstreams: McpUpstreams, current: AggregateSession, mcp: McpSetting, message: Record<string, unknown>): Promise<void> {
  const sends: Promise<unknown>[] = [];
  for (const [name, s] of current.servers) {
    if (serverAllowance(mcp, name) === null) continue;
    const upstream = upstreams.get(name);
    if (upstream !== undefined) sends.push(upstreamRpc(upstream, message, s, new Cancel()).catch(() => null));
  }
  await Promise.all(sends);
  if (!req.finished) accepted(req);
}

async function listTools(req: McpRequest, upstreams: McpUpstreams, current: AggregateSession, mcp: McpSetting): Promise<void> {
  const lists = await Promise.all(
    [...current.servers].map(async ([name, s]) => {
      const upstream = upstreams.get(name);
      const allowance = serverAllowance(mcp, name);
      if (upstream === undefined || allowance === null) return [];
      const tools: Tool[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_LIST_PAGES; page++) {
        const params = cursor === undefined ? {} : { cursor };
        const outcome = await upstreamRpc(upstream, { jsonrpc: '2.0', id: `gw-list-${page}`, method: 'tools/list', params }, s, new Cancel()).catch(() => null);
        const result = outcome?.message?.result as Record<string, unknown> | undefined;
        if (result === undefined) break;
        const allowed = filterToolsResult(result, allowance).tools;
        if (Array.isArray(allowed)) for (const tool of allowed as Tool[]) tools.push({ ...tool, name: `${name}${SEPARATOR}${tool.name}` });
        cursor = typeof result.nextCursor === 'string' ? result.nextCursor : undefined;
        if (cursor === undefined) break;
      }
      return tools;
    }),
  );
  if (!req.finished) answer(req, { tools: lists.flat() });
}

async function callTool(req: McpRequest, upstreams: McpUpstreams, current: AggregateSession, policy: ProjectPolicy, message: Record<string, unknown>): Promise<void> {
  const name = toolNameOf(message);
  if (name === null) return req.fail(Errors.toolCallWithoutName(), 'error');
  const split = name.indexOf(SEPARATOR);
  const server = split > 0 ? name.slice(0, split) : '';
  const tool = split > 0 ? name.slice(split + SEPARATOR.length) : name;
  const s = current.servers.get(server);
  const upstream = s === undefined ? undefined : upstreams.get(server);
  const known = s !== undefined && upstream !== undefined;
  if (known) req.server = server;
  req.tool = (known ? tool : name).slice(0, MAX_NAME);
  // A tool of no server in the session is refused as one not allowed: nothing is sent anywhere.
  const allowance = known ? serverAllowance(policy.mcp, server) : null;
  if (!(await admitToolCall(req, policy, allowance, tool, name, upstream?.pricePerCall ?? null, message))) return;
  const forwarded = JSON.stringify({ ...message, params: { ...(message.params as Record<string, unknown>), name: tool } });
  await relay(req, upstream!, { method: 'POST', sessionId: s!.sessionId, protocolVersion: s!.protocolVersion, accept: req.info.accept || 'application/json, text/event-stream', body: forwarded, traceparent: req.trace?.traceparent, cancel: req.cancel }, null);
}

/** DELETE /mcp: ends the session at every server. */
export async function deleteAggregate(req: McpRequest, upstreams: McpUpstreams): Promise<void> {
  const allowed = await setting(req);
  if (allowed === null) return;
  const current = await session(req, upstreams);
  if (current === null || req.finished) return;
  await Promise.all(
    [...current.servers].map(([name, s]) => {
      // A server the project may no longer use is not told anything, its session end included.
      const upstream = serverAllowance(allowed.mcp, name) === null ? undefined : upstreams.get(name);
      if (upstream === undefined || s.sessionId === '') return null;
      return upstream.send({ method: 'DELETE', ...s, accept: 'application/json, text/event-stream', cancel: new Cancel() }).then((res) => res.body(), () => null).catch(() => null);
    }),
  );
  if (req.finished) return;
  req.ex.sendWith(200, [], '');
  req.finish('success', 200, null);
}
