import type { AuditEvent, AuditOutcome, FinishReason, GatewayEndpoint, KeyRecord, ModelPrice, UsageRecord } from '@gateway/shared';
import type { RequestExtras } from './request-extras.js';

/**
 * The two records a gateway request leaves: its audit event, always, and its usage record when a
 * provider was called. Built once, when the request finishes, from what the request learnt.
 */
export interface RequestIdentity {
  readonly id: string;
  readonly info: { readonly requestId: string; readonly clientIp: string; readonly userAgent: string };
  readonly model: string | null;
  readonly provider: string | null;
  /** The inbound API, null for endpoints that are not model requests (the models list). */
  readonly endpoint: GatewayEndpoint | null;
  readonly attempts: number;
  /** Providers tried, in order; the call is over, so the record takes the list as it is. */
  readonly tried: string[];
  /** Providers of the route found in a cooldown, or null. */
  readonly coolingProviders: string[] | null;
  /** Tags, end user, cache and guardrail facts; null when no step had any. */
  readonly extras: RequestExtras | null;
}

export interface UsageOutcome {
  input: number;
  output: number;
  /** Prompt tokens read from the provider's cache (part of `input`). */
  cached: number;
  /** Prompt tokens written to the provider's cache (part of `input`). */
  cacheWrite: number;
  finishReason: FinishReason;
  /** The provider's own finish reason when it maps to none of the gateway's. */
  rawFinishReason: string | null;
  stream: boolean;
  /** The serving model's price, when the providers file gives one. */
  price: ModelPrice | null;
}

/**
 * US dollars, from the provider's counts: the prompt in three parts, each at its own price —
 * tokens read from the provider's cache (`cached_input`), tokens written to it (`cache_write`),
 * and the rest (`input`) — plus the output.
 */
export function costUsd(usage: UsageOutcome): number | null {
  const price = usage.price;
  if (price === null) return null;
  const cached = Math.min(usage.cached, usage.input);
  const written = Math.min(usage.cacheWrite, usage.input - cached);
  const plain = usage.input - cached - written;
  const dollars = (plain * price.input + cached * price.cached_input + written * price.cache_write + usage.output * price.output) / 1_000_000;
  // The column holds ten decimal places; rounding here keeps a record equal to what is stored.
  return Math.round(dollars * 1e10) / 1e10;
}

const MAX_USER_AGENT = 512;

export function auditEvent(
  call: RequestIdentity,
  key: KeyRecord | null,
  outcome: AuditOutcome,
  status: number,
  errorCode: string | null,
  timestamp: number,
  latencyMs: number,
): AuditEvent {
  const { info } = call;
  const event: AuditEvent = {
    id: call.id,
    request_id: info.requestId,
    timestamp: call.extras?.recordTs ?? timestamp,
    type: 'gateway.request',
    outcome,
    status,
    error_code: errorCode,
    project_id: key?.project_id ?? null,
    key_id: key?.id ?? null,
    actor: null,
    model: call.model,
    provider: call.provider,
    client_ip: info.clientIp || null,
    user_agent: info.userAgent ? info.userAgent.slice(0, MAX_USER_AGENT) : null,
    latency_ms: latencyMs,
    endpoint: call.endpoint,
    attempts: call.attempts,
    providers: call.tried,
    // Only when a cooldown passed a provider over: the common event carries no extra field.
    ...(call.coolingProviders === null ? {} : { skipped: call.coolingProviders.filter((p) => !call.tried.includes(p)) }),
  };
  const extras = call.extras;
  if (extras !== null) {
    if (extras.tags !== null) event.tags = extras.tags;
    if (extras.endUser !== null) event.end_user = extras.endUser;
    if (extras.cache !== null) event.cache = extras.cache;
    if (extras.guardrails !== null) event.guardrails = extras.guardrails;
    if (extras.batchId !== null) event.batch_id = extras.batchId;
  }
  return event;
}

export function usageRecord(call: RequestIdentity, key: KeyRecord, model: string, provider: string, usage: UsageOutcome, timestamp: number, latencyMs: number): UsageRecord {
  const record: UsageRecord = {
    id: call.id,
    request_id: call.info.requestId,
    project_id: key.project_id,
    key_id: key.id,
    timestamp: call.extras?.recordTs ?? timestamp,
    model,
    provider,
    tokens:
      usage.cacheWrite === 0
        ? { input: usage.input, output: usage.output, total: usage.input + usage.output, cached: usage.cached }
        : { input: usage.input, output: usage.output, total: usage.input + usage.output, cached: usage.cached, cache_write: usage.cacheWrite },
    cost_usd: costUsd(usage),
    latency_ms: latencyMs,
    finish_reason: usage.rawFinishReason === null ? usage.finishReason : 'other',
    provider_finish_reason: usage.rawFinishReason === null && usage.finishReason !== 'other' ? null : usage.rawFinishReason,
    stream: usage.stream,
    endpoint: call.endpoint ?? 'chat.completions',
  };
  const extras = call.extras;
  if (extras !== null) {
    if (extras.tags !== null) record.tags = extras.tags;
    if (extras.endUser !== null) record.end_user = extras.endUser;
    if (extras.requestedModel !== null) record.requested_model = extras.requestedModel;
    if (extras.batchId !== null) record.batch_id = extras.batchId;
    if (extras.cache === 'hit') {
      record.cache_hit = true;
      record.saved_usd = extras.savedUsd;
    }
  }
  return record;
}
