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
  MODEL_NOT_PRICED: { status: 403, type: 'permission_error', message: 'The model has no price, and the project has a budget.' },
  TOOL_NOT_ALLOWED: { status: 403, type: 'permission_error', message: 'This tool is not allowed for the project.' },
  UNSUPPORTED_PARAMETER: { status: 400, type: 'invalid_request_error', message: 'A parameter cannot be honoured by the provider of the model.' },
  GUARDRAIL_BLOCKED: { status: 400, type: 'invalid_request_error', message: 'A guardrail of the project blocked the request.' },
  NOT_FOUND: { status: 404, type: 'not_found_error', message: 'Not found.' },
  MODEL_NOT_FOUND: { status: 404, type: 'not_found_error', message: 'No provider serves this model.' },
  METHOD_NOT_ALLOWED: { status: 405, type: 'invalid_request_error', message: 'Method not allowed.' },
  CONFLICT: { status: 409, type: 'invalid_request_error', message: 'The resource already exists.' },
  PAYLOAD_TOO_LARGE: { status: 413, type: 'invalid_request_error', message: 'The request body is too large.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, type: 'invalid_request_error', message: 'The body must be application/json.' },
  QUOTA_EXCEEDED: { status: 429, type: 'insufficient_quota', message: 'The project has used its token quota.' },
  BUDGET_EXCEEDED: { status: 429, type: 'insufficient_quota', message: 'A spending budget of the project is used up.' },
  RATE_LIMITED: { status: 429, type: 'rate_limit_error', message: 'Too many requests; retry later.' },
  INTERNAL: { status: 500, type: 'api_error', message: 'Internal error.' },
  UPSTREAM_ERROR: { status: 502, type: 'api_error', message: 'The model provider failed.' },
  UNAVAILABLE: { status: 503, type: 'api_error', message: 'The service is temporarily unavailable.' },
  GUARDRAIL_UNAVAILABLE: { status: 503, type: 'api_error', message: 'A guardrail could not check the request.' },
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

/** How every key refusal says to send a key. */
const SEND_KEY = 'send it as x-api-key: <key> or Authorization: Bearer <key>';

/**
 * Named factories for the errors the data plane raises in more than one place or on its request
 * path, so one wording serves every endpoint and a test or the docs can name them (Fastify's
 * `lib/errors.js`). Messages never carry a secret.
 */
export const Errors = {
  // A refused key is described (where it was, its shape), never repeated: proxy/src/auth/key-hints.ts.
  noApiKey: () => new GatewayError('UNAUTHORIZED', `No API key: ${SEND_KEY}.`),
  bearerWithoutKey: () => new GatewayError('UNAUTHORIZED', `The Authorization header says Bearer but holds no key; ${SEND_KEY}.`),
  keyInOtherScheme: (scheme: string) => new GatewayError('UNAUTHORIZED', `The Authorization header uses the "${scheme}" scheme, not Bearer; ${SEND_KEY}.`),
  /** `what`: the key's shape ("a gateway key (gw_…, 40 characters)"), never a character of it. */
  keyWithoutBearer: (what: string) => new GatewayError('UNAUTHORIZED', `The Authorization header holds ${what} without "Bearer " before it; ${SEND_KEY}.`),
  keyInApiKeyHeader: (what: string) => new GatewayError('UNAUTHORIZED', `The key came in an api-key header (Azure OpenAI's), which the gateway does not read: ${SEND_KEY}. It holds ${what}.`),
  malformedApiKey: (what: string) => new GatewayError('UNAUTHORIZED', `The API key is not valid: it is ${what}.`),
  unknownApiKey: () => new GatewayError('UNAUTHORIZED', 'The API key is not valid: no such key.'),
  /** A key this proxy remembers as dead: deleted, or past its expiry. */
  deadApiKey: () => new GatewayError('UNAUTHORIZED', 'The API key was deleted or has expired.'),
  /** Too many failed authentications from one address (proxy/src/auth/auth-throttle.ts). */
  authThrottled: (retryAfter: number) =>
    new GatewayError('RATE_LIMITED', `Too many requests with a missing or invalid API key from this address; retry in ${retryAfter} s.`, { retryAfter }),
  keyDeleted: () => new GatewayError('UNAUTHORIZED', 'The API key was deleted.'),
  keyExpired: () => new GatewayError('UNAUTHORIZED', 'The API key has expired.'),
  keysUnverifiable: () => new GatewayError('UNAVAILABLE', 'Keys cannot be verified right now; retry shortly.', { retryAfter: 1 }),
  policyUnreadable: () => new GatewayError('UNAVAILABLE', 'The project policy cannot be read right now; retry shortly.', { retryAfter: 1 }),
  shuttingDown: () => new GatewayError('UNAVAILABLE', 'The gateway is shutting down; retry.', { retryAfter: 1 }),
  /** The control plane, which keeps Responses API state, could not be asked; `why` names the status, never a secret. */
  responseStoreUnavailable: (why: string) => new GatewayError('UNAVAILABLE', `Stored responses cannot be reached right now (${why}); retry shortly.`, { retryAfter: 1 }),
  cacheUnreachable: () => new GatewayError('UNAVAILABLE', 'The response cache cannot be reached right now; retry shortly.', { retryAfter: 1 }),
  bodyTooLarge: (maxBytes: number) => new GatewayError('PAYLOAD_TOO_LARGE', `The body is larger than ${maxBytes} bytes.`),
  bodyNotJsonType: () => new GatewayError('UNSUPPORTED_MEDIA_TYPE', 'The body must be JSON: send content-type: application/json.'),
  /** `why`: the parser's reason and where, line and column (proxy/src/protocols/json-body.ts); the body is never quoted. */
  bodyNotJson: (why?: string) => new GatewayError('INVALID_REQUEST', why === undefined ? 'The body is not valid JSON.' : `The body is not valid JSON: ${why}.`, { param: 'body' }),
  bodyEmpty: () => new GatewayError('INVALID_REQUEST', 'The body is empty; send a JSON object.', { param: 'body' }),
  bodyNotUtf8: () => new GatewayError('INVALID_REQUEST', 'The body is not valid UTF-8.', { param: 'body' }),
  nestedTooDeeply: () => new GatewayError('INVALID_REQUEST', 'The body is nested too deeply.', { param: 'body' }),
  /** A request field the endpoint refuses; `message` names the field and what it must be. */
  invalidField: (param: string, message: string) => new GatewayError('INVALID_REQUEST', message, { param }),
  /**
   * A parameter the provider behind a translation cannot honour: one that would change the
   * answer's shape, or one that only tunes it when the project refuses drops (`unsupported_params`).
   */
  unsupportedParameter: (param: string, message: string) => new GatewayError('UNSUPPORTED_PARAMETER', message, { param }),
  guardrailBlocked: (id: string, reason?: string) =>
    new GatewayError('GUARDRAIL_BLOCKED', `The guardrail \`${id}\` blocked the request${reason ? `: ${reason}` : '.'}`, { param: id }),
  tooMuchToGuard: (texts: number, guards: number, max: number) =>
    new GatewayError(
      'INVALID_REQUEST',
      `The request carries ${texts} texts for the project's ${guards} guardrails to read, ${texts * guards} checks; at most ${max} are made per request. Send fewer messages or parts, or join them.`,
      { param: 'messages' },
    ),
  guardrailUnavailable: (id: string) => new GatewayError('GUARDRAIL_UNAVAILABLE', `The guardrail \`${id}\` could not be reached; the project refuses requests it cannot check.`, { param: id }),
  modelNotAllowed: (model: string) => new GatewayError('MODEL_NOT_ALLOWED', `The model \`${model}\` is not allowed for this project.`, { param: 'model' }),
  /** `hint`: the nearest served id, or some served ids (proxy/src/routing/model-suggest.ts). */
  modelNotFound: (model: string, hint = '') => new GatewayError('MODEL_NOT_FOUND', `The model \`${model}\` is not served by this gateway.${hint}`, { param: 'model' }),
  maxTokensOverCap: (cap: number) => new GatewayError('INVALID_REQUEST', `max_tokens may be at most ${cap} for this project.`, { param: 'max_tokens' }),
  /** `message` names the budget (its id and scope) and what is left. */
  budgetExceeded: (message: string) => new GatewayError('BUDGET_EXCEEDED', message),
  modelNotPriced: (model: string) =>
    new GatewayError('MODEL_NOT_PRICED', `The model \`${model}\` has no price in the providers file, and this project has a spending budget.`, { param: 'model' }),
  nOverLimit: (max: number) => new GatewayError('INVALID_REQUEST', `n may be at most ${max} for this project.`, { param: 'n' }),
  providerFailed: (provider: string, cause?: unknown) => new GatewayError('UPSTREAM_ERROR', `Provider ${provider} failed.`, { cause }),
  noProviderTried: () => new GatewayError('UNAVAILABLE', 'No provider could be tried.', { retryAfter: 1 }),
  methodNotAllowed: (method: string, path: string) => new GatewayError('METHOD_NOT_ALLOWED', `${method} is not allowed on ${path}.`),
  /** CORS (proxy/src/http/cors.ts): a preflight from a browser whose origin is not in CORS_ORIGINS, or an OPTIONS from no browser. */
  originNotAllowed: (origin: string) => new GatewayError('FORBIDDEN', `The origin ${origin} may not call the gateway from a browser.`),
  optionsWithoutOrigin: () => new GatewayError('FORBIDDEN', 'OPTIONS is answered to browsers (CORS preflight) only.'),
  /** A resource of the caller's project that does not exist (or is another project's, which is not told apart). */
  notFoundNamed: (what: string, id: string) => new GatewayError('NOT_FOUND', `No ${what} with id '${String(id).slice(0, 200)}' found.`),
  noRoute: (method: string, path: string) => new GatewayError('NOT_FOUND', `No route for ${method} ${path}.`),
  internal: (cause?: unknown) => new GatewayError('INTERNAL', undefined, { cause }),
  modelHasNoEmbeddings: (model: string) => new GatewayError('INVALID_REQUEST', `The model \`${model}\` is served by a provider that has no embeddings.`, { param: 'model' }),
  rateLimited: (window: string, retryAfter: number) => new GatewayError('RATE_LIMITED', `Rate limit reached: ${window}. Retry in ${retryAfter} s.`, { retryAfter }),

  // A provider's failures: never the client's fault, except a refusal of what the client sent.
  /** The provider refused the request as the client sent it (its 400/422), naming the field when it does. */
  providerRefused: (provider: string, detail: string, param: string | null = null) => new GatewayError('INVALID_REQUEST', `Provider ${provider} refused the request${detail}`, { param }),
  providerTooLarge: (provider: string, detail: string) => new GatewayError('PAYLOAD_TOO_LARGE', `Provider ${provider} refused the request as too large${detail}`),
  providerRateLimited: (provider: string, detail: string, retryAfter: number, retryable: boolean) =>
    new GatewayError('RATE_LIMITED', `Provider ${provider} is rate-limiting requests${detail}`, { retryAfter, retryable }),
  providerStatus: (provider: string, status: number, detail: string, retryable: boolean) =>
    new GatewayError(status === 408 || status === 504 ? 'UPSTREAM_TIMEOUT' : 'UPSTREAM_ERROR', `Provider ${provider} answered ${status}${detail}`, { retryable }),
  providerTimeout: (provider: string, what: string, cause: unknown, retryable: boolean) => new GatewayError('UPSTREAM_TIMEOUT', `Provider ${provider} ${what}.`, { cause, retryable }),
  providerUnreachable: (provider: string, code: string, cause: unknown, retryable: boolean) =>
    new GatewayError('UPSTREAM_ERROR', `Provider ${provider} failed (${code || 'connection error'}).`, { cause, retryable }),
  /** A 401/403 or an API-key error from a provider: the gateway's provider key, not the client's. */
  providerKeyRefused: (provider: string, what: string) => new GatewayError('UPSTREAM_ERROR', `Provider ${provider} ${what}`),
  providerFailedMidStream: (provider: string, message: string) => new GatewayError('UPSTREAM_ERROR', `Provider ${provider} failed mid-stream${message ? `: ${message}` : ''}`),
  providerNotJson: (provider: string) => new GatewayError('UPSTREAM_ERROR', `Provider ${provider} sent a response that is not JSON.`),
  /** An answer that parsed but is not what the provider's API documents (`what`: "an object", "a JSON message"). */
  providerSentNot: (provider: string, what: string) => new GatewayError('UPSTREAM_ERROR', `Provider ${provider} sent a response that is not ${what}.`),
  providerEventNotJson: (provider?: string) => new GatewayError('UPSTREAM_ERROR', provider === undefined ? 'The provider sent a stream event that is not JSON.' : `Provider ${provider} sent a stream event that is not JSON.`),
  providerEventNotObject: (provider: string) => new GatewayError('UPSTREAM_ERROR', `Provider ${provider} sent a stream event that is not an object.`),
  providerStreamIncomplete: (provider: string) => new GatewayError('UPSTREAM_ERROR', `Provider ${provider} ended the stream before it was complete.`),
  providerNoCandidate: (provider: string) => new GatewayError('UPSTREAM_ERROR', `Provider ${provider} answered with no candidate.`),
  providerEmbeddingsCount: (provider: string, got: number | null, expected: number) => new GatewayError('UPSTREAM_ERROR', `Provider ${provider} sent ${got ?? 'no'} embeddings for ${expected} inputs.`),
  providerNotAnEmbedding: (provider: string, where: string) => new GatewayError('UPSTREAM_ERROR', `Provider ${provider} sent an embedding that is not one (${where}).`),
} as const;

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
