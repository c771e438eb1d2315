import {
  AUDIT_OUTCOMES,
  CACHE_OUTCOMES,
  GUARDRAIL_ACTIONS,
  MAX_END_USER_LENGTH,
  MAX_RECORD_BATCH_ID_LENGTH,
  MAX_RECORD_TAGS,
  MAX_TAG_KEY_LENGTH,
  MAX_TAG_VALUE_LENGTH,
  FINISH_REASONS,
  GATEWAY_ENDPOINTS,
  MAX_PROVIDER_NAME_LENGTH,
  MAX_RECORD_ATTEMPTS,
  MAX_RECORD_PROVIDERS,
  V1_BATCH_ENDPOINT,
  type AuditEvent,
  type RecordBatchVersion,
  type UsageRecord,
} from '@gateway/shared';

/**
 * Records as column arrays, the shape `insert … select * from unnest(…)` takes: one parameter
 * per column whatever the batch size, so a batch is one statement and one plan.
 *
 * Every record is checked here, before Postgres sees it: one record Postgres would refuse would
 * fail its whole batch on every retry, forever. A record that fails a check is left out and
 * reported, never fixed up, except for NUL characters, which text columns cannot store and which
 * only a client- or provider-supplied field (a user agent, a finish reason) could carry.
 *
 * A record leaves out what its batch version does not know (a v1 record has no cost) or what its
 * proxy does not fill yet; those columns get the defaults documented on the contract's fields.
 * A v1 record's later fields are not read at all: version 1 gave them no meaning.
 */
export interface UsageRows {
  ts: number[];
  id: string[];
  requestId: string[];
  projectId: string[];
  keyId: string[];
  model: string[];
  provider: string[];
  inputTokens: number[];
  outputTokens: number[];
  totalTokens: number[];
  cachedTokens: number[];
  costUsd: (number | null)[];
  latencyMs: number[];
  finishReason: string[];
  providerFinishReason: (string | null)[];
  stream: boolean[];
  endpoint: string[];
  cacheWriteTokens: number[];
  /** Tags as JSON text (stored as jsonb). */
  tags: string[];
  endUser: (string | null)[];
  cacheHit: boolean[];
  savedUsd: (number | null)[];
  requestedModel: (string | null)[];
  /** Version 6; null before. */
  batchId: (string | null)[];
}

export interface AuditRows {
  ts: number[];
  id: string[];
  requestId: string[];
  type: string[];
  outcome: string[];
  status: number[];
  errorCode: (string | null)[];
  projectId: (string | null)[];
  keyId: (string | null)[];
  actor: (string | null)[];
  model: (string | null)[];
  provider: (string | null)[];
  endpoint: (string | null)[];
  attempts: number[];
  /** One array per event. */
  providers: string[][];
  clientIp: (string | null)[];
  userAgent: (string | null)[];
  latencyMs: number[];
  /** An MCP request's facts as JSON text (stored as jsonb), else null. */
  mcp: (string | null)[];
  /** Requests each event stands for (version 3; 1 before). */
  count: number[];
  /** Providers passed over for a cooldown, one array per event (version 3; none before). */
  skipped: string[][];
  /** Tags as JSON text (version 4; `{}` before). */
  tags: string[];
  endUser: (string | null)[];
  cache: (string | null)[];
  /** Guardrail decisions as JSON text (version 4; `[]` before). */
  guardrails: string[];
  /** Version 6; null before. */
  batchId: (string | null)[];
}

export interface RejectedRecord {
  table: 'usage_records' | 'audit_events';
  /** The record's id when it has a usable one, for the log line; never the record itself. */
  id: string | null;
  reason: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const INT32_MAX = 2_147_483_647;
const SMALLINT_MAX = 32_767;
/** numeric(20, 10) holds ten digits before the point. */
const COST_LIMIT = 1e10;
const finishReasons = new Set<string>(FINISH_REASONS);
const outcomes = new Set<string>(AUDIT_OUTCOMES);
const endpoints = new Set<string>(GATEWAY_ENDPOINTS);

class Invalid extends Error {}

function uuid(value: unknown, field: string): string {
  if (typeof value !== 'string' || !UUID.test(value)) throw new Invalid(`${field} is not a uuid`);
  return value;
}

function nullableUuid(value: unknown, field: string): string | null {
  return value === null || value === undefined ? null : uuid(value, field);
}

function int(value: unknown, field: string, max: number, min = 0): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) throw new Invalid(`${field} is not an integer in ${min}..${max}`);
  return value;
}

/** Unix ms: the partition key. 0 up to year 9999 keeps to_timestamp() and the partitions sane. */
function timestamp(value: unknown): number {
  return int(value, 'timestamp', 253_402_300_799_999);
}

function text(value: unknown, field: string, allowEmpty = false): string {
  if (typeof value !== 'string' || (!allowEmpty && value.length === 0)) throw new Invalid(`${field} is not a non-empty string`);
  return value.includes('\0') ? value.replaceAll('\0', '\uFFFD') : value;
}

/** Optional fields echo what a client sent (a model name, a user agent), which may be empty. */
function nullableText(value: unknown, field: string): string | null {
  return value === null || value === undefined ? null : text(value, field, true);
}

function cost(value: unknown, field = 'cost_usd'): number | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value >= COST_LIMIT) throw new Invalid(`${field} is not a number in 0..${COST_LIMIT} or null`);
  return value;
}

const EMPTY_TAGS = '{}';
const NO_GUARDRAILS = '[]';
const cacheOutcomes = new Set<string>(CACHE_OUTCOMES);
const guardrailActions = new Set<string>(GUARDRAIL_ACTIONS);
const MAX_GUARDRAILS = 100;
const MAX_GUARDRAIL_ID = 128;

/** jsonb refuses \u0000 inside strings, as text columns refuse NUL. */
function jsonText(value: string): string {
  return value.replaceAll('\0', '\uFFFD');
}

/** A record's tags, checked and re-serialised as JSON text. */
function tags(value: unknown): string {
  if (value === undefined) return EMPTY_TAGS;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Invalid('tags is not an object');
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return EMPTY_TAGS;
  if (entries.length > MAX_RECORD_TAGS) throw new Invalid(`tags has more than ${MAX_RECORD_TAGS} entries`);
  const out: Record<string, string> = {};
  for (const [k, v] of entries) {
    if (k.length === 0 || k.length > MAX_TAG_KEY_LENGTH) throw new Invalid(`tags has a key not of 1..${MAX_TAG_KEY_LENGTH} characters`);
    if (typeof v !== 'string' || v.length === 0 || v.length > MAX_TAG_VALUE_LENGTH) throw new Invalid(`tags has a value not of 1..${MAX_TAG_VALUE_LENGTH} characters`);
    out[jsonText(k)] = jsonText(v);
  }
  return JSON.stringify(out);
}

function endUser(value: unknown): string | null {
  const user = nullableText(value, 'end_user');
  if (user !== null && user.length > MAX_END_USER_LENGTH) throw new Invalid(`end_user is longer than ${MAX_END_USER_LENGTH} characters`);
  return user;
}

/** Made by the gateway, never by a client: an empty one is a bug, not a value to keep. */
function batchId(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  const id = text(value, 'batch_id');
  if (id.length > MAX_RECORD_BATCH_ID_LENGTH) throw new Invalid(`batch_id is longer than ${MAX_RECORD_BATCH_ID_LENGTH} characters`);
  return id;
}

function cacheOutcome(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string' || !cacheOutcomes.has(value)) throw new Invalid('cache is not a known value');
  return value;
}

/** Guardrail decisions, checked and re-serialised (only their known fields are kept). */
function guardrailDecisions(value: unknown): string {
  if (value === undefined) return NO_GUARDRAILS;
  if (!Array.isArray(value) || value.length > MAX_GUARDRAILS) throw new Invalid(`guardrails is not a list of at most ${MAX_GUARDRAILS} decisions`);
  if (value.length === 0) return NO_GUARDRAILS;
  return JSON.stringify(
    value.map((d: unknown) => {
      const g = (typeof d === 'object' && d !== null ? d : {}) as { id?: unknown; stage?: unknown; action?: unknown; failed?: unknown };
      if (typeof g.id !== 'string' || g.id.length === 0 || g.id.length > MAX_GUARDRAIL_ID) throw new Invalid(`guardrails[].id is not a name of 1..${MAX_GUARDRAIL_ID} characters`);
      if (g.stage !== 'input' && g.stage !== 'output') throw new Invalid('guardrails[].stage is not input or output');
      if (typeof g.action !== 'string' || !guardrailActions.has(g.action)) throw new Invalid('guardrails[].action is not a known value');
      return g.failed === true ? { id: jsonText(g.id), stage: g.stage, action: g.action, failed: true } : { id: jsonText(g.id), stage: g.stage, action: g.action };
    }),
  );
}

function endpoint(value: unknown): string {
  if (typeof value !== 'string' || !endpoints.has(value)) throw new Invalid('endpoint is not a known value');
  return value;
}

function providerNames(value: unknown, field = 'providers'): string[] {
  if (!Array.isArray(value) || value.length > MAX_RECORD_PROVIDERS) throw new Invalid(`${field} is not a list of at most ${MAX_RECORD_PROVIDERS} names`);
  return value.map((name: unknown) => {
    if (typeof name === 'string' && name.length > MAX_PROVIDER_NAME_LENGTH) throw new Invalid(`${field} has a name over ${MAX_PROVIDER_NAME_LENGTH} characters`);
    return text(name, `${field}[]`);
  });
}

const MAX_MCP_NAME = 256;

/** An MCP request's {server, tool, method}, checked and re-serialised (only those fields are kept). */
function mcpFacts(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'object' || Array.isArray(value)) throw new Invalid('mcp is not an object');
  const m = value as { server?: unknown; tool?: unknown; method?: unknown };
  const name = (v: unknown, field: string, nullable: boolean): string | null => {
    if (nullable && (v === null || v === undefined)) return null;
    if (typeof v !== 'string' || v.length === 0 || v.length > MAX_MCP_NAME) throw new Invalid(`mcp.${field} is not a name of 1..${MAX_MCP_NAME} characters`);
    // jsonb refuses \u0000 inside strings, as text columns refuse NUL.
    return v.replaceAll('\0', '\uFFFD');
  };
  return JSON.stringify({ server: name(m.server, 'server', false), tool: name(m.tool, 'tool', true), method: name(m.method, 'method', false) });
}

function idOf(record: unknown): string | null {
  const id = (record as { id?: unknown } | null)?.id;
  return typeof id === 'string' && UUID.test(id) ? id : null;
}

export function emptyUsageRows(): UsageRows {
  return {
    ts: [],
    id: [],
    requestId: [],
    projectId: [],
    keyId: [],
    model: [],
    provider: [],
    inputTokens: [],
    outputTokens: [],
    totalTokens: [],
    cachedTokens: [],
    costUsd: [],
    latencyMs: [],
    finishReason: [],
    providerFinishReason: [],
    stream: [],
    endpoint: [],
    cacheWriteTokens: [],
    tags: [],
    endUser: [],
    cacheHit: [],
    savedUsd: [],
    requestedModel: [],
    batchId: [],
  };
}

export function emptyAuditRows(): AuditRows {
  return {
    ts: [],
    id: [],
    requestId: [],
    type: [],
    outcome: [],
    status: [],
    errorCode: [],
    projectId: [],
    keyId: [],
    actor: [],
    model: [],
    provider: [],
    endpoint: [],
    attempts: [],
    providers: [],
    clientIp: [],
    userAgent: [],
    latencyMs: [],
    mcp: [],
    count: [],
    skipped: [],
    tags: [],
    endUser: [],
    cache: [],
    guardrails: [],
    batchId: [],
  };
}

/** Appends each valid usage record of a batch of version `v` to `rows`; returns the ones left out. */
export function addUsageRows(rows: UsageRows, records: readonly unknown[], v: RecordBatchVersion): RejectedRecord[] {
  const rejected: RejectedRecord[] = [];
  for (const raw of records) {
    try {
      if (typeof raw !== 'object' || raw === null) throw new Invalid('not an object');
      const r = raw as Partial<UsageRecord>;
      const tokens = r.tokens as Partial<UsageRecord['tokens']> | undefined;
      if (typeof tokens !== 'object' || tokens === null) throw new Invalid('tokens is not an object');
      const input = int(tokens.input, 'tokens.input', INT32_MAX);
      const output = int(tokens.output, 'tokens.output', INT32_MAX);
      const total = int(tokens.total, 'tokens.total', INT32_MAX);
      if (typeof r.finish_reason !== 'string' || !finishReasons.has(r.finish_reason)) throw new Invalid('finish_reason is not a known value');
      if (typeof r.stream !== 'boolean') throw new Invalid('stream is not a boolean');
      const v2 = v >= 2;
      const cached = v2 && tokens.cached !== undefined ? int(tokens.cached, 'tokens.cached', INT32_MAX) : 0;
      if (cached > input) throw new Invalid('tokens.cached is more than tokens.input');
      const v4 = v >= 4;
      const cacheWrite = v4 && tokens.cache_write !== undefined ? int(tokens.cache_write, 'tokens.cache_write', INT32_MAX) : 0;
      if (cached + cacheWrite > input) throw new Invalid('tokens.cached and tokens.cache_write are more than tokens.input');
      const v4Fields = {
        tags: v4 ? tags(r.tags) : EMPTY_TAGS,
        endUser: v4 ? endUser(r.end_user) : null,
        cacheHit: v4 && r.cache_hit !== undefined ? r.cache_hit : false,
        savedUsd: v4 ? cost(r.saved_usd, 'saved_usd') : null,
        requestedModel: v >= 5 ? nullableText(r.requested_model, 'requested_model') : null,
        batchId: v >= 6 ? batchId(r.batch_id) : null,
      };
      if (typeof v4Fields.cacheHit !== 'boolean') throw new Invalid('cache_hit is not a boolean');
      const v2Fields = {
        cost: v2 ? cost(r.cost_usd) : null,
        endpoint: v2 && r.endpoint !== undefined ? endpoint(r.endpoint) : V1_BATCH_ENDPOINT,
        providerFinishReason: v2 ? nullableText(r.provider_finish_reason, 'provider_finish_reason') : null,
      };
      const row = {
        ts: timestamp(r.timestamp),
        id: uuid(r.id, 'id'),
        requestId: text(r.request_id, 'request_id'),
        projectId: uuid(r.project_id, 'project_id'),
        keyId: uuid(r.key_id, 'key_id'),
        model: text(r.model, 'model'),
        provider: text(r.provider, 'provider'),
        latencyMs: int(r.latency_ms, 'latency_ms', INT32_MAX),
      };
      rows.ts.push(row.ts);
      rows.id.push(row.id);
      rows.requestId.push(row.requestId);
      rows.projectId.push(row.projectId);
      rows.keyId.push(row.keyId);
      rows.model.push(row.model);
      rows.provider.push(row.provider);
      rows.inputTokens.push(input);
      rows.outputTokens.push(output);
      rows.totalTokens.push(total);
      rows.cachedTokens.push(cached);
      rows.costUsd.push(v2Fields.cost);
      rows.latencyMs.push(row.latencyMs);
      rows.finishReason.push(r.finish_reason);
      rows.providerFinishReason.push(v2Fields.providerFinishReason);
      rows.stream.push(r.stream);
      rows.endpoint.push(v2Fields.endpoint);
      rows.cacheWriteTokens.push(cacheWrite);
      rows.tags.push(v4Fields.tags);
      rows.endUser.push(v4Fields.endUser);
      rows.cacheHit.push(v4Fields.cacheHit);
      rows.savedUsd.push(v4Fields.savedUsd);
      rows.requestedModel.push(v4Fields.requestedModel);
      rows.batchId.push(v4Fields.batchId);
    } catch (err) {
      if (!(err instanceof Invalid)) throw err;
      rejected.push({ table: 'usage_records', id: idOf(raw), reason: err.message });
    }
  }
  return rejected;
}

/** Appends each valid audit event of a batch of version `v` to `rows`; returns the ones left out. */
export function addAuditRows(rows: AuditRows, events: readonly unknown[], v: RecordBatchVersion): RejectedRecord[] {
  const rejected: RejectedRecord[] = [];
  for (const raw of events) {
    try {
      if (typeof raw !== 'object' || raw === null) throw new Invalid('not an object');
      const e = raw as Partial<AuditEvent>;
      if (typeof e.outcome !== 'string' || !outcomes.has(e.outcome)) throw new Invalid('outcome is not a known value');
      const row = {
        ts: timestamp(e.timestamp),
        id: uuid(e.id, 'id'),
        requestId: text(e.request_id, 'request_id'),
        type: text(e.type, 'type'),
        status: int(e.status, 'status', SMALLINT_MAX),
        errorCode: nullableText(e.error_code, 'error_code'),
        projectId: nullableUuid(e.project_id, 'project_id'),
        keyId: nullableUuid(e.key_id, 'key_id'),
        actor: nullableUuid(e.actor, 'actor'),
        model: nullableText(e.model, 'model'),
        provider: nullableText(e.provider, 'provider'),
        clientIp: nullableText(e.client_ip, 'client_ip'),
        userAgent: nullableText(e.user_agent, 'user_agent'),
        latencyMs: int(e.latency_ms, 'latency_ms', INT32_MAX),
      };
      const v2 = v >= 2;
      const provider = row.provider;
      // Before version 2 a provider was called at most once per request.
      const tried = {
        endpoint: v2 && e.endpoint !== undefined ? (e.endpoint === null ? null : endpoint(e.endpoint)) : row.type === 'gateway.request' ? V1_BATCH_ENDPOINT : null,
        attempts: v2 && e.attempts !== undefined ? int(e.attempts, 'attempts', MAX_RECORD_ATTEMPTS) : provider === null ? 0 : 1,
        providers: v2 && e.providers !== undefined ? providerNames(e.providers) : provider === null ? [] : [provider],
      };
      const mcp = v2 ? mcpFacts(e.mcp) : null;
      const count = v >= 3 && e.count !== undefined ? int(e.count, 'count', INT32_MAX, 1) : 1;
      const skipped = v >= 3 && e.skipped !== undefined ? providerNames(e.skipped, 'skipped') : [];
      const v4 = v >= 4;
      const attribution = {
        tags: v4 ? tags(e.tags) : EMPTY_TAGS,
        endUser: v4 ? endUser(e.end_user) : null,
        cache: v4 ? cacheOutcome(e.cache) : null,
        guardrails: v4 ? guardrailDecisions(e.guardrails) : NO_GUARDRAILS,
        batchId: v >= 6 ? batchId(e.batch_id) : null,
      };
      rows.ts.push(row.ts);
      rows.id.push(row.id);
      rows.requestId.push(row.requestId);
      rows.type.push(row.type);
      rows.outcome.push(e.outcome);
      rows.status.push(row.status);
      rows.errorCode.push(row.errorCode);
      rows.projectId.push(row.projectId);
      rows.keyId.push(row.keyId);
      rows.actor.push(row.actor);
      rows.model.push(row.model);
      rows.provider.push(row.provider);
      rows.endpoint.push(tried.endpoint);
      rows.attempts.push(tried.attempts);
      rows.providers.push(tried.providers);
      rows.clientIp.push(row.clientIp);
      rows.userAgent.push(row.userAgent);
      rows.latencyMs.push(row.latencyMs);
      rows.mcp.push(mcp);
      rows.count.push(count);
      rows.skipped.push(skipped);
      rows.tags.push(attribution.tags);
      rows.endUser.push(attribution.endUser);
      rows.cache.push(attribution.cache);
      rows.guardrails.push(attribution.guardrails);
      rows.batchId.push(attribution.batchId);
    } catch (err) {
      if (!(err instanceof Invalid)) throw err;
      rejected.push({ table: 'audit_events', id: idOf(raw), reason: err.message });
    }
  }
  return rejected;
}

/** Row `i` of `rows` as a one-row set, for writing records one by one. */
export function pickRow<T extends object>(rows: T, i: number): T {
  const one = {} as Record<string, unknown[]>;
  for (const [column, values] of Object.entries(rows)) one[column] = [(values as unknown[])[i]];
  return one as T;
}

export function rowCount(rows: { id: readonly string[] }): number {
  return rows.id.length;
}
