import { Errors, type GatewayError, type McpServerAllowance } from '@gateway/shared';
import { idOf, methodOf, RPC, type RequestId } from './jsonrpc.js';
import { filterToolsResult } from './tool-access.js';

/**
 * What `/mcp/{server}` lets through, message by message: an allow-list of the MCP methods a client
 * sends, each checked against the project's setting for the server. A method the gateway does not
 * know is not forwarded, since its effect on the server is unknown (JSON-RPC "method not found");
 * prompts and resources are opted into like tools; list answers come back holding only what the
 * project may use. Responses (the client answering a server's sampling, roots or elicitation
 * request) pass: they answer something the server asked.
 */
export type Verdict =
  | { kind: 'pass' }
  /** Passed, and the answer to this request id is filtered. */
  | { kind: 'filter'; id: RequestId; filter: (result: Record<string, unknown>) => Record<string, unknown> }
  | { kind: 'refuse'; error: GatewayError; rpcCode: number };

/** Requests passed as they are: the session's plumbing, which reads no server data. */
const PLAIN_REQUESTS = new Set(['initialize', 'ping', 'logging/setLevel']);
/** Client notifications of the MCP specification; any other is not forwarded. */
const NOTIFICATIONS = new Set(['notifications/initialized', 'notifications/cancelled', 'notifications/progress', 'notifications/roots/list_changed']);

const PASS: Verdict = { kind: 'pass' };

/** The verdict on one message other than tools/call (admitted on its own, with quota and budgets). */
export function judgeMessage(message: Record<string, unknown>, allowance: McpServerAllowance): Verdict {
  const method = methodOf(message);
  if (method === null) return PASS;
  const id = idOf(message);
  if (id === null) return judgeNotification(method);
  if (PLAIN_REQUESTS.has(method)) return PASS;
  const params = asObject(message.params);
  switch (method) {
    case 'tools/list':
      return allowance.tools === '*' ? PASS : { kind: 'filter', id, filter: (r) => filterToolsResult(r, allowance) };
    case 'prompts/list':
      return listed(id, allowance.prompts, 'prompts', (p) => nameOf(p));
    case 'prompts/get': {
      const name = typeof params?.name === 'string' ? params.name : null;
      return name !== null && allows(allowance.prompts, name) ? PASS : refuse('MCP_NOT_ALLOWED', `The prompt \`${(name ?? '').slice(0, 256)}\` is not allowed for this project.`, RPC.invalidParams);
    }
    case 'resources/list':
      return listed(id, allowance.resources, 'resources', (r) => (typeof r.uri === 'string' ? r.uri : null));
    case 'resources/templates/list':
      return listed(id, allowance.resources, 'resourceTemplates', (t) => (typeof t.uriTemplate === 'string' ? t.uriTemplate : null));
    case 'resources/read':
    case 'resources/subscribe':
    case 'resources/unsubscribe': {
      const uri = typeof params?.uri === 'string' ? params.uri : null;
      return uri !== null && allowsUri(allowance.resources, uri) ? PASS : refuse('MCP_NOT_ALLOWED', `The resource \`${(uri ?? '').slice(0, 256)}\` is not allowed for this project.`, RPC.invalidParams);
    }
    case 'completion/complete':
      return judgeCompletion(asObject(params?.ref), allowance);
    default:
      return refuse('MCP_NOT_ALLOWED', `The gateway does not pass \`${method.slice(0, 64)}\` to MCP servers.`, RPC.methodNotFound);
  }
}

/** A client notification: the specification's pass, any other is answered and kept from the servers. */
export function judgeNotification(method: string): Verdict {
  return NOTIFICATIONS.has(method) ? PASS : refuse('MCP_NOT_ALLOWED', `The gateway does not pass the notification \`${method.slice(0, 64)}\` to MCP servers.`, RPC.methodNotFound);
}

/** Completions read a prompt's or a resource template's arguments: allowed with the thing they complete. */
function judgeCompletion(ref: Record<string, unknown> | null, allowance: McpServerAllowance): Verdict {
  if (ref?.type === 'ref/prompt' && typeof ref.name === 'string' && allows(allowance.prompts, ref.name)) return PASS;
  if (ref?.type === 'ref/resource' && typeof ref.uri === 'string' && allowsUri(allowance.resources, ref.uri)) return PASS;
  return refuse('MCP_NOT_ALLOWED', 'completion/complete refers to a prompt or resource not allowed for this project.', RPC.invalidParams);
}

function listed(id: RequestId, allowed: '*' | string[] | undefined, field: string, keyOf: (item: Record<string, unknown>) => string | null): Verdict {
  if (allowed === '*') return PASS;
  return {
    kind: 'filter',
    id,
    filter: (result) => {
      const items = result[field];
      if (!Array.isArray(items)) return result;
      return {
        ...result,
        [field]: items.filter((item: unknown) => {
          const object = asObject(item);
          const key = object === null ? null : keyOf(object);
          return key !== null && allows(allowed, key);
        }),
      };
    },
  };
}

/**
 * Whether a resource URI is on a list. A server resolves the URI it is sent (`..` segments,
 * `%2e%2e`, the case of the scheme), so `docs://public/faq/../../private/keys` would match the
 * prefix `docs://public/*` as written and read a private resource: a prefix entry must match the
 * URI both as sent and as a URL parser resolves it (a URI no parser reads matches no prefix). An
 * exact entry matches the exact string the operator listed.
 */
function allowsUri(allowed: '*' | string[] | undefined, uri: string): boolean {
  if (allowed === undefined) return false;
  if (allowed === '*') return true;
  let resolved: string | null;
  try {
    resolved = new URL(uri).href;
  } catch {
    resolved = null;
  }
  for (const entry of allowed) {
    if (!entry.endsWith('*')) {
      if (uri === entry) return true;
      continue;
    }
    const prefix = entry.slice(0, -1);
    if (resolved !== null && uri.startsWith(prefix) && resolved.startsWith(prefix)) return true;
  }
  return false;
}

/** Whether a name or URI is on a list; an entry ending in `*` is a prefix. Nothing listed: nothing allowed. */
export function allows(allowed: '*' | string[] | undefined, value: string): boolean {
  if (allowed === undefined) return false;
  if (allowed === '*') return true;
  for (const entry of allowed) {
    if (entry.endsWith('*') ? value.startsWith(entry.slice(0, -1)) : value === entry) return true;
  }
  return false;
}

function nameOf(item: Record<string, unknown>): string | null {
  return typeof item.name === 'string' ? item.name : null;
}

function asObject(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

function refuse(code: 'MCP_NOT_ALLOWED', message: string, rpcCode: number): Verdict {
  return { kind: 'refuse', error: Errors.mcpRefused(code, message), rpcCode };
}
