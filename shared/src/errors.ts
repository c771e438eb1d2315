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

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_CODES, code);
}

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
 * Named factories for every error either service raises, so one wording serves every endpoint and
 * a test or the docs can name them (Fastify's `lib/errors.js`). Outside this file no code writes
 * `new GatewayError(`: errors.test.ts fails on one. Messages never carry a secret.
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

  // The provider adapters' own findings (Bedrock, Vertex, the connection pool).
  /** A provider error whose code a mapping chose (bedrock-errors.ts): the mapping owns the wording. */
  fromProvider: (code: ErrorCode, message: string, options: { retryAfter?: number; retryable?: boolean } = {}) => new GatewayError(code, message, options),
  /** A status no mapping knows: always UPSTREAM_ERROR, unlike providerStatus (a 504 stays UPSTREAM_ERROR). */
  providerAnswered: (provider: string, status: number, detail: string, retryable: boolean) => new GatewayError('UPSTREAM_ERROR', `Provider ${provider} answered ${status}${detail}`, { retryable }),
  providerStreamException: (provider: string, exceptionType: string, message: string) =>
    new GatewayError('UPSTREAM_ERROR', `Provider ${provider} failed mid-stream (${exceptionType})${message ? `: ${message}` : ''}`),
  providerCorruptEventStream: (provider: string) => new GatewayError('UPSTREAM_ERROR', `Provider ${provider} sent a corrupt event stream.`),
  /** `what`: the documented part that is missing ("output.message.content"). */
  providerAnswerWithout: (provider: string, what: string) => new GatewayError('UPSTREAM_ERROR', `Provider ${provider} sent an answer without ${what}.`),
  /** Vertex's 401/403: `what` says which of the gateway's credentials it refused. */
  providerCredentialsRefused: (provider: string, what: string, status: number, message: string) =>
    new GatewayError('UPSTREAM_ERROR', `Provider ${provider} ${what} (${status}${message ? `: ${message}` : ''}); check its credentials_file and project.`),
  providerTokenUnavailable: (provider: string, message: string) =>
    new GatewayError('UNAVAILABLE', `Provider ${provider} could not get an access token from its credentials_file's token_uri (${message}).`, { retryAfter: 1, retryable: true }),
  providerQueueFull: (provider: string) => new GatewayError('UNAVAILABLE', `Provider ${provider} has too many requests waiting; retry shortly.`, { retryAfter: 1, retryable: true }),
  /** A route was given a provider without embeddings: the gateway's fault, never the client's. */
  adapterHasNoEmbeddings: (provider: string) => new GatewayError('INTERNAL', `Provider ${provider} has no embeddings.`),
  /** A `cache_control` breakpoint (proxy/src/providers/cache-breakpoint.ts); `where` is its path in the body. */
  cacheControlNotEphemeral: (where: string) => new GatewayError('INVALID_REQUEST', `\`${where}\` must be {"type": "ephemeral"}, with an optional "ttl" of "5m" or "1h".`, { param: where }),
  cacheControlBadTtl: (where: string) => new GatewayError('INVALID_REQUEST', `\`${where}.ttl\` must be "5m" or "1h".`, { param: `${where}.ttl` }),

  // Quotas and budgets (proxy/src/policy): amounts come formatted.
  quotaUsedUp: () => new GatewayError('QUOTA_EXCEEDED', 'The project has used its token quota.'),
  quotaCannotCover: (need: string, left: string, quota: string) =>
    new GatewayError('QUOTA_EXCEEDED', `This request may need ${need} tokens; the project has ${left} left of its ${quota}-token quota. Lower max_tokens or raise the quota.`),
  quotaUncheckable: () => new GatewayError('UNAVAILABLE', 'The quota cannot be checked right now; retry shortly.', { retryAfter: 1 }),
  /** `scope`: "the project", "key …" or "tag …"; `per`: "in total" or "per month". */
  budgetCannotCover: (id: string, scope: string, limit: string, per: string, cost: string) =>
    new GatewayError(
      'BUDGET_EXCEEDED',
      `Budget ${id} (${scope}, ${limit} ${per}) cannot cover this request, which may cost up to ${cost}. Lower max_tokens, wait for the period to reset or raise the budget.`,
      { param: id },
    ),
  budgetUncheckable: () => new GatewayError('UNAVAILABLE', 'The budget cannot be checked right now; retry shortly.', { retryAfter: 1 }),

  // MCP (proxy/src/mcp).
  mcpNoApiKey: () => new GatewayError('UNAUTHORIZED', 'No API key. Send it as x-api-key or Authorization: Bearer.'),
  mcpInvalidApiKey: () => new GatewayError('UNAUTHORIZED', 'The API key is not valid.'),
  mcpNotEnabled: () => new GatewayError('MCP_NOT_ALLOWED', 'MCP is not enabled for this project.'),
  mcpServerNotEnabled: (server: string) => new GatewayError('MCP_NOT_ALLOWED', `The MCP server \`${server}\` is not enabled for this project.`),
  mcpServerUnknown: (server: string) => new GatewayError('NOT_FOUND', `The gateway serves no MCP server named \`${server}\`.`),
  mcpSessionRequired: () => new GatewayError('NOT_FOUND', 'Mcp-Session-Id is required; initialize first.'),
  mcpSessionUnknown: () => new GatewayError('NOT_FOUND', 'No such session; initialize again.'),
  mcpNotOneMessage: () => new GatewayError('INVALID_REQUEST', 'The body must be one JSON-RPC message (batches are not served on /mcp).'),
  mcpNotJsonRpc: () => new GatewayError('INVALID_REQUEST', 'The body must be a JSON-RPC message or batch.'),
  mcpBatchWithToolCall: () => new GatewayError('INVALID_REQUEST', 'A JSON-RPC batch may not hold tools/call; send each call on its own.'),
  mcpBatchIdTwice: (id: string | number) => new GatewayError('INVALID_REQUEST', `The JSON-RPC batch uses the request id ${JSON.stringify(id).slice(0, 64)} twice; each request needs its own.`),
  /** A refusal of proxy/src/mcp/message-policy.ts: the policy owns the wording. */
  mcpRefused: (code: ErrorCode, message: string) => new GatewayError(code, message),
  /** One message's refusal, for the whole batch that held it. */
  mcpRefusedInBatch: (refusal: { code: ErrorCode; message: string }) => new GatewayError(refusal.code, `${refusal.message} (in a JSON-RPC batch: nothing of it was sent)`),
  toolCallWithoutName: () => new GatewayError('INVALID_REQUEST', 'tools/call needs params.name.', { param: 'params.name' }),
  toolNotAllowed: (tool: string) => new GatewayError('TOOL_NOT_ALLOWED', `The tool \`${tool}\` is not allowed for this project.`, { param: 'params.name' }),
  mcpServerRefusedCredentials: (server: string, status: number) => new GatewayError('UPSTREAM_ERROR', `The MCP server \`${server}\` refused the gateway's credentials (its ${status}).`),
  mcpServerTimedOut: (server: string) => new GatewayError('UPSTREAM_TIMEOUT', `The MCP server \`${server}\` did not answer in time.`),
  mcpServerUnreachable: (server: string) => new GatewayError('UPSTREAM_ERROR', `The MCP server \`${server}\` could not be reached or broke off its answer.`),

  // The control plane: sign-in, sessions and tokens (control-plane/src/auth, routes/signins.ts, routes/passwords.ts).
  unauthorized: () => new GatewayError('UNAUTHORIZED'),
  noAccessToken: () => new GatewayError('UNAUTHORIZED', 'Send an access token as "Authorization: Bearer <token>"; get one from POST /v1/signins.'),
  /** `what`: "access token" or "session cookie". */
  tokenExpired: (what: string) => new GatewayError('UNAUTHORIZED', `The ${what} has expired; sign in again.`),
  tokenInvalid: (what: string) => new GatewayError('UNAUTHORIZED', `The ${what} is invalid.`),
  accessTokenRevoked: () => new GatewayError('UNAUTHORIZED', 'The access token was revoked (password changed or reset, or account disabled); sign in again.'),
  sessionTooOld: () => new GatewayError('UNAUTHORIZED', 'The session has reached its maximum age; sign in again.'),
  sessionSignedOut: () => new GatewayError('UNAUTHORIZED', 'This session was signed out; sign in again.'),
  accountDisabled: () => new GatewayError('UNAUTHORIZED', 'This account is disabled; ask an account admin.'),
  badCredentials: () => new GatewayError('UNAUTHORIZED', 'Wrong email or password.'),
  signinThrottled: (retryAfter: number) => new GatewayError('RATE_LIMITED', 'Too many failed sign-ins; retry later.', { retryAfter }),
  signinUnavailable: () => new GatewayError('UNAVAILABLE', 'Sign-in is unavailable for a moment; retry shortly.'),
  signoutUnavailable: () => new GatewayError('UNAVAILABLE', 'Sign-out is unavailable for a moment; retry shortly.'),
  passwordSigninOff: () => new GatewayError('FORBIDDEN', 'Password sign-in is turned off here; sign in with single sign-on (GET /v1/signins/oidc).'),
  refreshGrantWithCredentials: () => new GatewayError('INVALID_REQUEST', 'The refresh grant takes no email, password or refresh_cookie; send the current token as the bearer.'),
  noSessionToRefresh: () => new GatewayError('UNAUTHORIZED', 'No session to refresh: send the current token as "Authorization: Bearer <token>", or sign in.'),
  refreshWithoutCsrfHeader: () => new GatewayError('FORBIDDEN', 'A refresh with the session cookie must carry an X-Requested-With header.', { param: 'x-requested-with' }),
  wrongPassword: () => new GatewayError('FORBIDDEN', 'The current password is wrong.', { param: 'current_password' }),
  passwordThrottled: (retryAfter: number) => new GatewayError('RATE_LIMITED', 'Too many wrong passwords; retry later.', { retryAfter }),
  ssoNotConfigured: () => new GatewayError('NOT_FOUND', 'Single sign-on is not configured here (OIDC_ISSUER); sign in with POST /v1/signins.'),
  identityProviderUnreachable: () => new GatewayError('UNAVAILABLE', 'The identity provider cannot be reached; try again shortly.'),
  identityAccountUnreadable: () => new GatewayError('INTERNAL', 'The account of this identity could not be read.'),
  internalTokenRequired: () => new GatewayError('UNAUTHORIZED', 'This route needs the internal token of the deployment.'),
  downloadLinkExpired: () => new GatewayError('UNAUTHORIZED', 'The download link has expired; export again.'),
  downloadLinkInvalid: () => new GatewayError('UNAUTHORIZED', 'The download link is invalid.'),

  // The control plane: who may do what, and what does not exist.
  /** `what` finishes "Only account admins …" ("create users"). */
  adminsOnly: (what: string) => new GatewayError('FORBIDDEN', `Only account admins ${what}.`),
  projectRoleForbidden: (role: string, what: string) => new GatewayError('FORBIDDEN', `A project ${role} may not ${what}.`),
  /** `param`: the field that named the project ("id", "project_id"). */
  noSuchProject: (param: string) => new GatewayError('NOT_FOUND', 'No such project.', { param }),
  noSuchUser: () => new GatewayError('NOT_FOUND', 'No such user.', { param: 'user_id' }),
  noSuchKey: () => new GatewayError('NOT_FOUND', 'No such key in this project.', { param: 'key_id' }),
  noSuchBudget: () => new GatewayError('NOT_FOUND', 'No such budget in this project.', { param: 'budget_id' }),
  noSuchWebhook: () => new GatewayError('NOT_FOUND', 'No such webhook in this project.', { param: 'webhook_id' }),
  noSuchStoredResponse: () => new GatewayError('NOT_FOUND', 'No such stored response.', { param: 'id' }),
  noSuchFile: () => new GatewayError('NOT_FOUND', 'No such file.', { param: 'file_id' }),
  noSuchBatch: () => new GatewayError('NOT_FOUND', 'No such batch.', { param: 'batch_id' }),
  /** A batch file's line (numbered from 1, as editors do) that is not a request the gateway can run; `why` never quotes the line. */
  badBatchLine: (line: number, why: string) => new GatewayError('INVALID_REQUEST', `Line ${line} of the file: ${why}.`, { param: 'file' }),
  batchTooManyLines: (max: number) => new GatewayError('INVALID_REQUEST', `A batch file holds at most ${max} lines (BATCH_MAX_LINES).`, { param: 'file' }),
  batchFileTooLarge: (maxBytes: number) => new GatewayError('PAYLOAD_TOO_LARGE', `A batch file is at most ${maxBytes} bytes (BATCH_FILE_MAX_BYTES).`, { param: 'file' }),
  batchFileEmpty: () => new GatewayError('INVALID_REQUEST', 'The file holds no request lines.', { param: 'file' }),
  /** A line (numbered from 1) calling another endpoint than the batch's. */
  batchEndpointMismatch: (line: number, url: string, endpoint: string) =>
    new GatewayError('INVALID_REQUEST', `Line ${line} of the input file calls ${url}, not the batch's endpoint ${endpoint}.`, { param: 'endpoint' }),
  batchFileNotUsable: (why: string) => new GatewayError('INVALID_REQUEST', `The input file cannot be used for a batch: ${why}.`, { param: 'input_file_id' }),
  batchNotCancellable: (status: string) => new GatewayError('CONFLICT', `The batch is ${status} and can no longer be cancelled.`, { param: 'batch_id' }),
  /** A provider's batch API (provider-run batches) answered a call of the gateway's with an error. */
  providerBatchRefused: (provider: string, what: string, status: number) => new GatewayError('UPSTREAM_ERROR', `Provider ${provider}'s batch API refused to ${what} (status ${status}).`),
  /** A provider's ended batch gave no result for a line the gateway sent in it. */
  providerBatchNoResult: (provider: string) => new GatewayError('UPSTREAM_ERROR', `Provider ${provider}'s batch ended without a result for this request.`),
  batchStoreUnavailable: (why: string) => new GatewayError('UNAVAILABLE', `Batches cannot be reached right now (${why}); retry shortly.`, { retryAfter: 1 }),
  /** A refusal the control plane worded (its error body's code, message and param), passed on as it was. */
  relayed: (code: ErrorCode, message: string, param: string | null) => new GatewayError(code, message, { param }),
  badUpload: (why: string) => new GatewayError('INVALID_REQUEST', `The upload cannot be read: ${why}.`, { param: 'file' }),
  batchNotDeletable: (status: string) => new GatewayError('INVALID_REQUEST', `The batch is ${status}; a batch is deleted once it has ended (cancel it first).`, { param: 'batch_id' }),
  batchStillRunning: () => new GatewayError('INVALID_REQUEST', 'The batch has not ended yet; its results are offered once it has (processing_status "ended").', { param: 'batch_id' }),
  /** A Message Batches request (numbered from 0, as `requests` is indexed) that cannot be run; `why` never quotes it. */
  badBatchRequest: (index: number, why: string) => new GatewayError('INVALID_REQUEST', `requests.${index}: ${why}.`, { param: `requests.${index}` }),
  batchesOff: () => new GatewayError('NOT_FOUND', 'Batches and files need the control plane (CONTROL_PLANE_URL and INTERNAL_TOKEN), which this gateway is not configured with.'),
  notAMember: () => new GatewayError('NOT_FOUND', 'This user is not a member of the project.', { param: 'user_id' }),
  noAccountWithEmail: () => new GatewayError('NOT_FOUND', 'No account has this email; an account admin creates accounts with POST /v1/users.', { param: 'email' }),
  projectDeletedDuringKeyCreation: () => new GatewayError('NOT_FOUND', 'The project was deleted while the key was being created.', { param: 'id' }),
  noManagementRoute: (method: string, path: string) => new GatewayError('NOT_FOUND', `No route for ${method} ${path}`),
  /** A model request sent to the management API; `base` is the gateway's public URL. */
  modelRequestOnManagementApi: (path: string, base: string) =>
    new GatewayError('NOT_FOUND', `${path} is a gateway endpoint, and this is the management API. Send model requests to the gateway at ${base} (base URL ${base}/v1), with a project API key.`),
  /** `allowed`: the methods the path takes, joined. */
  methodNotAllowedUse: (method: string, path: string, allowed: string) => new GatewayError('METHOD_NOT_ALLOWED', `${method} is not allowed on ${path}; use ${allowed}.`),
  emailTaken: () => new GatewayError('CONFLICT', 'An account with this email already exists.', { param: 'email' }),
  projectNameTaken: (name: string, id: string, whose: string) =>
    new GatewayError('CONFLICT', `A project named "${name}" (${id}) already exists for ${whose}; project names are unique per account, whatever their case.`, { param: 'name' }),
  responseIdTaken: () => new GatewayError('CONFLICT', 'This response id belongs to another project.', { param: 'id' }),
  lastAccountAdmin: () => new GatewayError('CONFLICT', 'This is the last enabled account admin; make another account admin first.'),
  lastProjectOwner: () => new GatewayError('CONFLICT', 'A project keeps at least one owner; make someone else owner first.'),
  keysUncreatable: () => new GatewayError('UNAVAILABLE', 'Keys cannot be created while the gateway cannot reach Redis; retry shortly.', { retryAfter: 1 }),
  keyNotPublished: () => new GatewayError('UNAVAILABLE', 'The key could not be published to the gateway; nothing was created. Retry shortly.', { retryAfter: 1 }),
  dashboardNotBuilt: () =>
    new GatewayError('UNAVAILABLE', 'The dashboard has not been built: run `npm run build` (it runs `vite build control-plane/dashboard`), then reload. The management API under /v1 works without it.'),

  // The control plane: bodies and queries it refuses. `where` is "body" or "query"; `field` its path, or "".
  payloadTooLarge: () => new GatewayError('PAYLOAD_TOO_LARGE'),
  unsupportedMediaType: () => new GatewayError('UNSUPPORTED_MEDIA_TYPE'),
  managementBodyNotJson: () => new GatewayError('INVALID_REQUEST', 'The body is not valid JSON.'),
  managementBodyEmpty: () => new GatewayError('INVALID_REQUEST', 'The body is empty; send a JSON object.'),
  managementBodyTooDeep: (max: number) => new GatewayError('INVALID_REQUEST', `The body is nested deeper than ${max} levels; no management request needs that.`),
  /** "query.limit must be <= 1000", "body.email is required": the failing field first, param set to it. */
  invalidInput: (where: string, field: string, problem: string) => new GatewayError('INVALID_REQUEST', `${where}${field ? `.${field}` : ''} ${problem}`, { param: field || null }),
  /** "body.url is not a URL": `problem` follows the field's name. */
  badBodyField: (param: string, problem: string) => new GatewayError('INVALID_REQUEST', `body.${param} ${problem}`, { param }),
  badKeyTags: (problem: string) => new GatewayError('INVALID_REQUEST', `body.tags: ${problem}`, { param: 'tags' }),
  expiryInPast: () => new GatewayError('INVALID_REQUEST', 'body.expires_at must be in the future', { param: 'expires_at' }),
  memberTargetAmbiguous: (param: string) => new GatewayError('INVALID_REQUEST', 'body: give exactly one of user_id and email', { param }),
  unstorableText: () => new GatewayError('INVALID_REQUEST', 'The body holds text PostgreSQL cannot store (a lone UTF-16 surrogate).'),
  tooManyBudgets: (max: number) => new GatewayError('INVALID_REQUEST', `A project has at most ${max} budgets; delete one first.`),
  tooManyWebhooks: (max: number) => new GatewayError('INVALID_REQUEST', `A project has at most ${max} webhooks; delete one first.`),
  webhookHostNotPublic: () =>
    new GatewayError(
      'INVALID_REQUEST',
      'body.url must reach a public address: its host is or resolves to a private, loopback, link-local or other non-public address',
      { param: 'url' },
    ),
  webhookHostUnresolved: () => new GatewayError('INVALID_REQUEST', 'body.url: its host could not be resolved', { param: 'url' }),
  badCursor: (why: string) => new GatewayError('INVALID_REQUEST', `query.cursor ${why}`, { param: 'cursor' }),
  tagNotKeyValue: (pair: string) => new GatewayError('INVALID_REQUEST', `query.tag: \`${pair}\` is not key=value`, { param: 'tag' }),
  badTagFilter: (problem: string) => new GatewayError('INVALID_REQUEST', `query.tag: ${problem}`, { param: 'tag' }),
  tagGivenTwice: (key: string) => new GatewayError('INVALID_REQUEST', `query.tag: tag \`${key}\` is given two values; a record has one`, { param: 'tag' }),
  orderBothWays: () => new GatewayError('INVALID_REQUEST', 'query: give order_desc or order_asc, not both', { param: 'order_asc' }),
  fromAfterTo: () => new GatewayError('INVALID_REQUEST', 'query.from must not be after query.to', { param: 'from' }),
  fromNotBeforeTo: () => new GatewayError('INVALID_REQUEST', 'query.from must be before query.to', { param: 'from' }),
  tooManyBuckets: (max: number) => new GatewayError('INVALID_REQUEST', `query.bucket_ms is too small for the range: at most ${max} buckets`, { param: 'bucket_ms' }),
  /** `groups`: the summary groups, joined. */
  badGroupBy: (groups: string) =>
    new GatewayError('INVALID_REQUEST', `query.group_by must be one of ${groups}, end_user or tag:<key> (a tag key of 1-32 characters a-z, 0-9, _ . -)`, { param: 'group_by' }),
  badLogPosition: () => new GatewayError('INVALID_REQUEST', 'query.after must be a log id (a non-negative integer)', { param: 'after' }),
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
