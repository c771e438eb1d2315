import type { ErrorCode, GatewayError } from '@gateway/shared';

/**
 * Errors in Anthropic's shape, `{"type":"error","error":{"type","message"}}`, with the gateway's
 * status kept. Anthropic's body has no `param`: the field leads the message instead
 * ("max_tokens: Field required"), unless the message already starts with it. UNAVAILABLE stays 503 (with Retry-After) rather than
 * Anthropic's 529: it is the gateway that cannot serve (keys unverifiable, draining, a provider's
 * queue full), the status is the one every endpoint and the audit trail use, and the SDKs retry
 * both alike.
 */
const TYPES: Record<ErrorCode, string> = {
  INVALID_REQUEST: 'invalid_request_error',
  UNAUTHORIZED: 'authentication_error',
  FORBIDDEN: 'permission_error',
  MODEL_NOT_ALLOWED: 'permission_error',
  MCP_NOT_ALLOWED: 'permission_error',
  TOOL_NOT_ALLOWED: 'permission_error',
  NOT_FOUND: 'not_found_error',
  MODEL_NOT_FOUND: 'not_found_error',
  METHOD_NOT_ALLOWED: 'invalid_request_error',
  CONFLICT: 'invalid_request_error',
  PAYLOAD_TOO_LARGE: 'request_too_large',
  UNSUPPORTED_MEDIA_TYPE: 'invalid_request_error',
  QUOTA_EXCEEDED: 'rate_limit_error',
  RATE_LIMITED: 'rate_limit_error',
  INTERNAL: 'api_error',
  UPSTREAM_ERROR: 'api_error',
  UNAVAILABLE: 'overloaded_error',
  UPSTREAM_TIMEOUT: 'api_error',
};

export function anthropicErrorType(code: ErrorCode): string {
  return TYPES[code];
}

function errorMessage(err: GatewayError): string {
  const param = err.param;
  if (param === null || err.message.startsWith(param) || err.message.startsWith(`\`${param}\``)) return err.message;
  return `${param}: ${err.message}`;
}

export function anthropicErrorBody(err: GatewayError): string {
  return JSON.stringify({ type: 'error', error: { type: TYPES[err.code], message: errorMessage(err) } });
}

/** One SSE event with its `event:` line: Anthropic's SDKs skip events that have none. */
export function sseEvent(name: string, data: string): string {
  return `event: ${name}\ndata: ${data}\n\n`;
}

export function anthropicStreamError(err: GatewayError): string {
  return sseEvent('error', anthropicErrorBody(err));
}
