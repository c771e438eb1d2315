import type { ErrorCode, GatewayError } from '@gateway/shared';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';

/**
 * The few JSON-RPC 2.0 facts the gateway needs of an MCP message, and the errors it answers
 * itself. A refusal is a JSON-RPC error object whose `data.code` is the gateway's error code, so an
 * MCP client shows it like any server error and a script can still branch on the code.
 */
export type { JSONRPCMessage, RequestId };

/** JSON-RPC's own codes, and the one MCP servers use for implementation errors. */
export const RPC = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  /** The gateway refused or could not serve the request (its code is in `data.code`). */
  gateway: -32001,
} as const;

/** What one POST body is: a single message (the common case) or a batch. */
export interface ParsedBody {
  /** The single message, or null for a batch. */
  message: Record<string, unknown> | null;
  batch: Record<string, unknown>[] | null;
}

/** The body as JSON-RPC, or null when it is not JSON or not a message (answered with a parse error). */
export function parseBody(raw: Buffer): ParsedBody | null {
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch {
    return null;
  }
  if (Array.isArray(value)) {
    if (value.length === 0 || !value.every(isObject)) return null;
    return { message: null, batch: value as Record<string, unknown>[] };
  }
  return isObject(value) ? { message: value, batch: null } : null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A request carries an id and a method; a notification a method only; a response no method. */
export function methodOf(message: Record<string, unknown>): string | null {
  return typeof message.method === 'string' ? message.method : null;
}

export function idOf(message: Record<string, unknown>): RequestId | null {
  const id = message.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/** The tool a tools/call names, or null when it names none (the server answers that itself). */
export function toolNameOf(message: Record<string, unknown>): string | null {
  const params = message.params;
  if (!isObject(params)) return null;
  return typeof params.name === 'string' ? params.name : null;
}

export function errorMessage(id: RequestId | null, code: number, message: string, data?: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } });
}

/** A gateway refusal as a JSON-RPC error: the message names the code, `data` carries it. */
export function gatewayErrorMessage(id: RequestId | null, err: GatewayError, rpcCode: number = RPC.gateway): string {
  return errorMessage(id, rpcCode, `${err.code}: ${err.message}`, { code: err.code as ErrorCode, type: err.type });
}

export function resultMessage(id: RequestId, result: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id, result });
}

/** Whether a message is the answer to request `id`, and whether that answer is a failure. */
export function answerOf(message: unknown, id: RequestId): 'result' | 'error' | null {
  if (!isObject(message) || message.id !== id || 'method' in message) return null;
  if ('error' in message) return 'error';
  if (!('result' in message)) return null;
  // A tool's own failure is a result flagged isError (MCP), not a JSON-RPC error.
  const result = message.result;
  return isObject(result) && result.isError === true ? 'error' : 'result';
}
