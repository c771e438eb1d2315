/**
 * The one home of the error table. Every 4xx/5xx either service sends is a GatewayError
 * created from a code listed here, so the status, the OpenAI error `type` and the documented
 * table (README "Error codes") cannot drift apart: errors.test.ts compares them.
 */
export const ERROR_CODES = {
  INVALID_REQUEST: { status: 400, type: 'invalid_request_error', message: 'The request is invalid.' },
  UNAUTHORIZED: { status: 401, type: 'authentication_error', message: 'Missing, unknown or deleted credentials.' },
  FORBIDDEN: { status: 403, type: 'permission_error', message: 'You may not do this.' },
  MODEL_NOT_ALLOWED: { status: 403, type: 'permission_error', message: 'This model is not allowed for the project.' },
  MCP_NOT_ALLOWED: { status: 403, type: 'permission_error', message: 'This MCP server is not enabled for the project.' },
  TOOL_NOT_ALLOWED: { status: 403, type: 'permission_error', message: 'This tool is not allowed for the project.' },
  NOT_FOUND: { status: 404, type: 'not_found_error', message: 'Not found.' },
  MODEL_NOT_FOUND: { status: 404, type: 'not_found_error', message: 'No provider serves this model.' },
  METHOD_NOT_ALLOWED: { status: 405, type: 'invalid_request_error', message: 'Method not allowed.' },
  CONFLICT: { status: 409, type: 'invalid_request_error', message: 'The resource already exists.' },
  PAYLOAD_TOO_LARGE: { status: 413, type: 'invalid_request_error', message: 'The request body is too large.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, type: 'invalid_request_error', message: 'The body must be application/json.' },
  QUOTA_EXCEEDED: { status: 429, type: 'insufficient_quota', message: 'The project has used its token quota.' },
  RATE_LIMITED: { status: 429, type: 'rate_limit_error', message: 'Too many requests; retry later.' },
  INTERNAL: { status: 500, type: 'api_error', message: 'Internal error.' },
  UPSTREAM_ERROR: { status: 502, type: 'api_error', message: 'The model provider failed.' },
  UNAVAILABLE: { status: 503, type: 'api_error', message: 'The service is temporarily unavailable.' },
  UPSTREAM_TIMEOUT: { status: 504, type: 'api_error', message: 'The model provider timed out.' },
} as const satisfies Record<string, { status: number; type: string; message: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: ErrorCode };
}

export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly type: string;
  readonly param: string | null;
  /** Seconds, sent as Retry-After on 429/503. */
  readonly retryAfter: number | undefined;
  /**
   * A provider failed in a way another provider (or a later try) may not: refused or reset
   * connection, connect or header timeout, 429, 500, 502, 503, 504, 529. The router fails over on it.
   */
  readonly retryable: boolean;

  constructor(code: ErrorCode, message?: string, options: { param?: string | null; retryAfter?: number; cause?: unknown; retryable?: boolean } = {}) {
    const entry = ERROR_CODES[code];
    super(message ?? entry.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.status = entry.status;
    this.type = entry.type;
    this.param = options.param ?? null;
    this.retryAfter = options.retryAfter;
    this.retryable = options.retryable ?? false;
  }

  toBody(): ErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }

  toJSON(): string {
    return JSON.stringify(this.toBody());
  }
}

export function isGatewayError(err: unknown): err is GatewayError {
  return err instanceof GatewayError;
}

/** Any thrown value as a GatewayError; unknown failures become INTERNAL without leaking their text. */
export function toGatewayError(err: unknown): GatewayError {
  return isGatewayError(err) ? err : new GatewayError('INTERNAL', undefined, { cause: err });
}

const STATUS_TEXT: Record<number, string> = {
  200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No Content', 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden',
  404: 'Not Found', 405: 'Method Not Allowed', 409: 'Conflict', 413: 'Payload Too Large',
  415: 'Unsupported Media Type', 429: 'Too Many Requests', 500: 'Internal Server Error',
  502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Gateway Timeout',
};

/** "401 Unauthorized": the status line uWebSockets.js wants, built once per status. */
export function statusLine(status: number): string {
  return `${status} ${STATUS_TEXT[status] ?? 'Unknown'}`;
}
