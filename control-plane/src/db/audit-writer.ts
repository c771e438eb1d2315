import { newRecordId, type AuditOutcome, type AuditTarget, type ErrorCode } from '@gateway/shared';
import type { Queryable } from './connect.js';

/**
 * Management actions written straight into audit_events: the control plane owns Postgres, so its
 * own events need no queue. Pass the transaction that made the change and the event commits (or
 * not) with it. By construction nothing here can carry a secret: the columns are ids, names of
 * event types and codes, and request facts.
 */
export interface ManagementEvent {
  type: string;
  outcome: AuditOutcome;
  status: number;
  errorCode?: ErrorCode | null;
  projectId?: string | null;
  keyId?: string | null;
  /** The acting user's id. */
  actor?: string | null;
  /** What the action was done to (the account, member, project, key or webhook). */
  target?: AuditTarget | null;
  /** The batch a batch's own event is about (as its lines' events carry it). */
  batchId?: string | null;
}

/** Facts of the HTTP request behind the event. */
export interface RequestFacts {
  requestId: string;
  clientIp: string | null;
  userAgent: string | null;
  latencyMs: number;
}

export async function writeAudit(sql: Queryable, event: ManagementEvent, facts: RequestFacts): Promise<string> {
  const id = newRecordId();
  await sql`
    insert into audit_events
      (ts, id, request_id, type, outcome, status, error_code, project_id, key_id, actor, target_type, target_id, client_ip, user_agent, latency_ms, batch_id)
    values
      (${Date.now()}, ${id}, ${facts.requestId}, ${event.type}, ${event.outcome}, ${event.status}, ${event.errorCode ?? null},
       ${event.projectId ?? null}, ${event.keyId ?? null}, ${event.actor ?? null}, ${event.target?.type ?? null}, ${event.target?.id ?? null},
       ${facts.clientIp}, ${facts.userAgent}, ${Math.max(0, Math.round(facts.latencyMs))}, ${event.batchId ?? null})`;
  return id;
}
