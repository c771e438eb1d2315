import type { FastifyInstance } from 'fastify';
import { cacheSettingAnswer } from './cache-setting-schema.js';
import { AUDIT_OUTCOMES, AUDIT_TARGET_TYPES, CACHE_OUTCOMES, DEFAULT_RESPONSES_TTL_DAYS, ERROR_CODES, FINISH_REASONS, GATEWAY_ENDPOINTS, GUARDRAIL_ACTIONS, MAX_RECORD_BATCH_ID_LENGTH, UNSUPPORTED_PARAMS_MODES } from '@gateway/shared';
import { ACCOUNT_ROLES, PROJECT_ROLES } from '../auth/permissions.js';
import { WEBHOOK_SCHEMAS } from './webhook-schemas.js';
import { BUDGET_SCHEMAS } from './budget-schemas.js';
import { BATCH_SCHEMAS } from '../batches/batch-schemas.js';

export { nameSchema } from './names.js';

/**
 * The JSON shapes of the management API, in one place. Response shapes are shared schemas (they
 * become `components.schemas` of the OpenAPI document, and Fastify serialises through them, so a
 * field not listed here, such as a key hash, can never leave by accident). Request shapes are
 * inline in each route, where the validator sees them.
 */
const uuid = { type: 'string', format: 'uuid' } as const;
const dateTime = { type: 'string', format: 'date-time' } as const;
/** An MCP allowance list: every tool, prompt or resource of a server, or the ones named. */
const allOrNames = { anyOf: [{ type: 'string', enum: ['*'] }, { type: 'array', items: { type: 'string' } }] } as const;
const nullable = <T extends object>(schema: T) => ({ ...schema, type: [(schema as { type: string }).type, 'null'] });
const endpoint = { type: 'string', enum: GATEWAY_ENDPOINTS, description: 'The gateway API the request came in on.' } as const;
const keyTags = {
  type: 'object',
  additionalProperties: { type: 'string' },
  description: "Default cost-attribution tags of the key's requests ({} when none); a request's `x-gateway-tags` win per tag key.",
} as const;
const dollars = { type: ['number', 'null'], description: 'US dollars; null when no price is known.' } as const;
const tokens = {
  type: 'object',
  required: ['input', 'output', 'total', 'cached'],
  properties: {
    input: { type: 'integer' },
    output: { type: 'integer' },
    total: { type: 'integer' },
    cached: { type: 'integer', description: "Prompt tokens read from the provider's cache; counted in `input` too." },
  },
} as const;
const recordTokens = {
  ...tokens,
  required: [...tokens.required, 'cache_write'],
  properties: {
    ...tokens.properties,
    cache_write: { type: 'integer', description: "Prompt tokens written to the provider's cache; counted in `input` too." },
  },
} as const;
const tags = {
  type: 'object',
  additionalProperties: { type: 'string' },
  description: 'Cost-attribution tags: the `x-gateway-tags` header over the key\'s default tags; `{}` when none.',
} as const;
const endUser = { type: ['string', 'null'], description: "The client's end user (OpenAI `user`, Anthropic `metadata.user_id`); null when none." } as const;
const batchId = { type: ['string', 'null'], description: 'The batch (`batch_…` / `msgbatch_…`) this request was a line of; null otherwise.' } as const;
const summaryFigures = {
  requests: { type: 'integer' },
  tokens,
  cost_usd: { ...dollars, description: 'US dollars; null only when no record counted here has a cost.' },
} as const;

export const SHARED_SCHEMAS = [
  {
    $id: 'ErrorBody',
    description: 'Every error, in the OpenAI error shape with a stable code.',
    type: 'object',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['message', 'type', 'param', 'code'],
        properties: {
          message: { type: 'string' },
          type: { type: 'string' },
          param: { type: ['string', 'null'] },
          code: { type: 'string', enum: Object.keys(ERROR_CODES) },
        },
      },
    },
  },
  {
    $id: 'Token',
    type: 'object',
    required: ['access_token', 'token_type', 'expires_in'],
    properties: {
      access_token: { type: 'string', description: 'A JWT; send it as `Authorization: Bearer <token>`.' },
      token_type: { type: 'string', enum: ['Bearer'] },
      expires_in: { type: 'integer', description: 'Seconds until the token expires.' },
    },
  },
  {
    $id: 'User',
    description: 'An account. Never a password or its hash.',
    type: 'object',
    required: ['id', 'email', 'role', 'disabled', 'created_at'],
    properties: {
      id: uuid,
      email: { type: 'string' },
      role: { type: 'string', enum: ACCOUNT_ROLES, description: '`admin` sees and manages everything; `member` only its projects.' },
      disabled: { type: 'boolean', description: 'A disabled account cannot sign in and its tokens are refused.' },
      created_at: dateTime,
    },
  },
  {
    $id: 'Project',
    type: 'object',
    required: ['id', 'name', 'quota_tokens', 'quota_period', 'used_tokens', 'rate_limits', 'allowed_models', 'max_tokens_cap', 'cache', 'unsupported_params', 'responses', 'created_at'],
    properties: {
      id: uuid,
      name: { type: 'string' },
      quota_tokens: { type: ['integer', 'null'], description: 'Token quota; null means none.' },
      quota_period: { type: 'string', enum: ['total', 'month'], description: 'What the quota counts: all time or each calendar month (UTC).' },
      used_tokens: { type: 'integer', description: "Tokens used in the quota's current period (all time without a quota)." },
      rate_limits: {
        type: 'object',
        required: ['key_rpm', 'key_tpm', 'project_rpm', 'project_tpm'],
        properties: {
          key_rpm: { type: ['integer', 'null'] },
          key_tpm: { type: ['integer', 'null'] },
          project_rpm: { type: ['integer', 'null'] },
          project_tpm: { type: ['integer', 'null'] },
        },
      },
      allowed_models: { type: ['array', 'null'], items: { type: 'string' }, description: 'Models the project may use; null means all.' },
      max_tokens_cap: { type: ['integer', 'null'], description: 'Largest max_tokens a request may ask for; null means none.' },
      max_n: { type: ['integer', 'null'], description: 'Most completions (`n`) one request may ask for; absent or null: the default, 8.' },
      model_aliases: { type: ['object', 'null'], additionalProperties: { type: 'string' }, description: 'Model id asked for → model id served; absent or null: none.' },
      unsupported_params: {
        type: 'string',
        enum: [...UNSUPPORTED_PARAMS_MODES],
        description: 'A parameter with no counterpart in a request translated between protocols: `drop` (the default: dropped, named in `x-gateway-dropped-params`) or `refuse` (400 `UNSUPPORTED_PARAMETER`).',
      },
      responses: {
        type: 'object',
        required: ['ttl_days'],
        description: `How long the gateway keeps the project's Responses API state (stored responses and their conversations); \`ttl_days\` ${DEFAULT_RESPONSES_TTL_DAYS} when unset.`,
        properties: { ttl_days: { type: 'integer' } },
      },
      mcp: {
        type: ['object', 'null'],
        description: 'MCP servers (and tools) the project\'s keys may use through `/mcp`; null means none.',
        properties: { servers: { type: 'object', additionalProperties: { type: 'object', properties: { tools: allOrNames, prompts: allOrNames, resources: allOrNames } } } },
      },
      cache: cacheSettingAnswer,
      created_at: dateTime,
    },
  },
  {
    $id: 'ApiKey',
    description: 'An API key as listed: never the secret.',
    type: 'object',
    required: ['id', 'project_id', 'name', 'prefix', 'created_by', 'created_at', 'expires_at', 'last_used_at', 'deleted_at', 'tags'],
    properties: {
      id: uuid,
      project_id: uuid,
      name: { type: 'string' },
      prefix: { type: 'string', description: 'The first characters of the key, to recognise it.' },
      created_by: nullable(uuid),
      created_at: dateTime,
      expires_at: nullable(dateTime),
      last_used_at: nullable(dateTime),
      deleted_at: { ...nullable(dateTime), description: 'When the key was deleted; null while it is live.' },
      tags: keyTags,
    },
  },
  {
    $id: 'NewApiKey',
    description: 'A key just created: the only response that ever carries the secret `key`.',
    type: 'object',
    required: ['id', 'project_id', 'name', 'prefix', 'key', 'created_at', 'expires_at', 'tags'],
    properties: {
      id: uuid,
      project_id: uuid,
      name: { type: 'string' },
      prefix: { type: 'string' },
      key: { type: 'string', description: 'The secret. Shown once; only its hash is stored.' },
      created_at: dateTime,
      expires_at: nullable(dateTime),
      tags: keyTags,
    },
  },
  {
    $id: 'Member',
    type: 'object',
    required: ['project_id', 'user_id', 'email', 'role', 'created_at'],
    properties: { project_id: uuid, user_id: uuid, email: { type: 'string' }, role: { type: 'string', enum: PROJECT_ROLES }, created_at: dateTime },
  },
  {
    $id: 'UsageRecord',
    type: 'object',
    required: [
      'id',
      'request_id',
      'project_id',
      'key_id',
      'timestamp',
      'model',
      'provider',
      'tokens',
      'cost_usd',
      'latency_ms',
      'finish_reason',
      'provider_finish_reason',
      'stream',
      'endpoint',
      'tags',
      'end_user',
      'cache_hit',
      'saved_usd',
      'requested_model',
      'batch_id',
    ],
    properties: {
      id: uuid,
      request_id: { type: 'string' },
      project_id: uuid,
      key_id: uuid,
      timestamp: { type: 'integer', description: 'Unix ms when the request completed.' },
      model: { type: 'string' },
      provider: { type: 'string', description: 'The provider that answered.' },
      tokens: recordTokens,
      cost_usd: { ...dollars, description: 'US dollars for this request; null when its model has no price.' },
      latency_ms: { type: 'integer' },
      finish_reason: { type: 'string', enum: FINISH_REASONS },
      provider_finish_reason: { type: ['string', 'null'], description: "The provider's own finish reason when `finish_reason` is `other`, else null." },
      stream: { type: 'boolean' },
      endpoint,
      tags,
      end_user: endUser,
      cache_hit: { type: 'boolean', description: "Answered from the gateway's response cache: no provider call, tokens 0, `cost_usd` 0." },
      saved_usd: { ...dollars, description: 'On a cache hit, what the provider call behind the answer cost; else null.' },
      requested_model: { type: ['string', 'null'], description: "The model id the client asked for when the project's `model_aliases` served `model` instead; else null." },
      batch_id: batchId,
    },
  },
  {
    $id: 'AuditEvent',
    type: 'object',
    required: [
      'id',
      'request_id',
      'timestamp',
      'type',
      'outcome',
      'status',
      'error_code',
      'project_id',
      'key_id',
      'actor',
      'target',
      'model',
      'provider',
      'endpoint',
      'attempts',
      'providers',
      'client_ip',
      'user_agent',
      'latency_ms',
      'count',
      'skipped',
      'tags',
      'end_user',
      'cache',
      'guardrails',
      'batch_id',
    ],
    properties: {
      id: uuid,
      request_id: { type: 'string' },
      timestamp: { type: 'integer', description: 'Unix ms.' },
      type: { type: 'string', description: '`gateway.request`, `gateway.throttled` (requests refused by the failed-authentication throttle, `count` of them from one address in one second), or a management action such as `key.created`, `project.deleted`, `signin.failed`.' },
      outcome: { type: 'string', enum: AUDIT_OUTCOMES },
      status: { type: 'integer' },
      error_code: { type: ['string', 'null'] },
      project_id: nullable(uuid),
      key_id: nullable(uuid),
      actor: { ...nullable(uuid), description: 'The acting user id of a management action.' },
      target: {
        type: ['object', 'null'],
        description: 'What a management action was done to: an account (`user`), a project member (`member`, the user id), a project, a key or a webhook. Null for gateway requests, sign-ins and sign-outs.',
        required: ['type', 'id'],
        additionalProperties: false,
        properties: { type: { type: 'string', enum: AUDIT_TARGET_TYPES }, id: { type: 'string' } },
      },
      model: { type: ['string', 'null'] },
      provider: { type: ['string', 'null'], description: 'The provider that answered (the last one tried).' },
      endpoint: { ...nullable(endpoint), enum: [...GATEWAY_ENDPOINTS, null], description: 'The gateway API of a gateway request; null for management actions and `/v1/models`.' },
      attempts: { type: 'integer', description: 'Provider attempts made for this request; 0 when none.' },
      providers: { type: 'array', items: { type: 'string' }, description: 'The providers tried, in order; empty when none.' },
      mcp: {
        type: ['object', 'null'],
        description: 'An MCP request\'s server, tool (`tools/call` only) and JSON-RPC method; null for every other event.',
        properties: { server: { type: 'string' }, tool: { type: ['string', 'null'] }, method: { type: 'string' } },
      },
      client_ip: { type: ['string', 'null'] },
      user_agent: { type: ['string', 'null'] },
      latency_ms: { type: 'integer' },
      count: { type: 'integer', minimum: 1, description: 'Requests this event stands for: 1, except `gateway.throttled`.' },
      skipped: { type: 'array', items: { type: 'string' }, description: 'Providers serving the model that were not tried because they were in a cooldown after failing.' },
      tags,
      end_user: endUser,
      cache: { type: ['string', 'null'], enum: [...CACHE_OUTCOMES, null], description: 'What the response cache did, for a project that has it on; else null.' },
      guardrails: {
        type: 'array',
        description: 'Every guardrail decision on the request, in order.',
        items: {
          type: 'object',
          required: ['id', 'stage', 'action'],
          properties: {
            id: { type: 'string' },
            stage: { type: 'string', enum: ['input', 'output'] },
            action: { type: 'string', enum: GUARDRAIL_ACTIONS },
            failed: { type: 'boolean', description: 'The guard could not answer and its `failure_mode: open` let the request through.' },
          },
        },
      },
      batch_id: batchId,
    },
  },
  {
    $id: 'UsageSummary',
    description: 'Sums of the usage records the filters select: per group (busiest first) and in total.',
    type: 'object',
    required: ['data', 'totals'],
    properties: {
      data: {
        type: 'array',
        items: {
          type: 'object',
          description: 'One group: its name under the key `group_by` names (`project` and `key` hold ids).',
          required: ['requests', 'tokens', 'cost_usd'],
          properties: {
            project: uuid,
            model: { type: 'string' },
            provider: { type: 'string' },
            key: uuid,
            endpoint,
            end_user: { type: ['string', 'null'], description: 'With `group_by=end_user`: the end user; null for the records without one.' },
            tag: { type: ['string', 'null'], description: 'With `group_by=tag:<key>`: the value of that tag; null for the records without it.' },
            ...summaryFigures,
          },
        },
      },
      totals: { type: 'object', required: ['requests', 'tokens', 'cost_usd'], properties: summaryFigures },
    },
  },
  ...WEBHOOK_SCHEMAS,
  ...BUDGET_SCHEMAS,
  ...BATCH_SCHEMAS,
  {
    $id: 'ServedModel',
    description: 'A model id the gateway serves, as clients send it.',
    type: 'object',
    required: ['id', 'providers'],
    properties: {
      id: { type: 'string' },
      providers: { type: 'array', items: { type: 'string' }, description: 'The providers that serve it, in the order they are tried.' },
    },
  },
  {
    $id: 'GatewayInfo',
    description: 'What clients of the gateway need to reach it.',
    type: 'object',
    required: ['public_url'],
    properties: {
      public_url: { type: 'string', description: 'The address clients send gateway requests to (PUBLIC_GATEWAY_URL), without /v1.' },
    },
  },
] as const;

export function addSharedSchemas(app: FastifyInstance): void {
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);
}

export const ref = (id: (typeof SHARED_SCHEMAS)[number]['$id']) => ({ $ref: `${id}#` });

/** Error responses every route can give. */
export const ERROR_RESPONSES = { '4xx': ref('ErrorBody'), '5xx': ref('ErrorBody') } as const;

/** `{data: [...]}`: lists that are small enough to return whole. */
export const listOf = (id: Parameters<typeof ref>[0]) => ({
  type: 'object',
  required: ['data'],
  properties: { data: { type: 'array', items: ref(id) } },
});

/** `{data, next_cursor, has_more}`: the keyset-paged lists (records, accounts). */
export const pageOf = (id: Parameters<typeof ref>[0]) => ({
  type: 'object',
  required: ['data', 'next_cursor', 'has_more'],
  properties: {
    data: { type: 'array', items: ref(id) },
    next_cursor: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page; null on the last page.' },
    has_more: { type: 'boolean' },
  },
});

export const uuidSchema = uuid;
export const dateTimeSchema = dateTime;

/** The record lists' `batch_id` filter; longer than a record may carry would match nothing. */
export const batchIdQuerySchema = {
  type: 'string',
  minLength: 1,
  maxLength: MAX_RECORD_BATCH_ID_LENGTH,
  description: 'Only records of the lines of this batch (`batch_…` / `msgbatch_…`).',
} as const;

/** Path parameters. */
export const projectParams = {
  type: 'object',
  required: ['id'],
  additionalProperties: false,
  properties: { id: { ...uuid, description: 'Project id.' } },
} as const;
