import type { AuditEvent, AuditOutcome, FinishReason, KeyRecord, UsageRecord } from '@gateway/shared';

/**
 * The two records a gateway request leaves: its audit event, always, and its usage record when a
 * provider was called. Built once, when the request finishes, from what the request learnt.
 */
export interface RequestIdentity {
  readonly id: string;
  readonly info: { readonly requestId: string; readonly clientIp: string; readonly userAgent: string };
  readonly model: string | null;
  readonly provider: string | null;
}

export interface UsageOutcome {
  input: number;
  output: number;
  finishReason: FinishReason;
  stream: boolean;
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
  return {
    id: call.id,
    request_id: info.requestId,
    timestamp,
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
  };
}

export function usageRecord(call: RequestIdentity, key: KeyRecord, model: string, provider: string, usage: UsageOutcome, timestamp: number, latencyMs: number): UsageRecord {
  return {
    id: call.id,
    request_id: call.info.requestId,
    project_id: key.project_id,
    key_id: key.id,
    timestamp,
    model,
    provider,
    tokens: { input: usage.input, output: usage.output, total: usage.input + usage.output },
    latency_ms: latencyMs,
    finish_reason: usage.finishReason,
    stream: usage.stream,
  };
}
