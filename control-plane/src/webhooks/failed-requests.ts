import type { Db } from '../db/connect.js';
import { recordEvent, type RecordedEvent } from './event-outbox.js';
import { MAX_FAILED_REQUESTS_PER_EVENT, type BlockedRequestSummary, type FailedRequestSummary } from './event-types.js';

/**
 * gateway.request.failed: the writer puts each failed gateway request of a project with a
 * subscribed endpoint in webhook_failed_requests, in the transaction that lands its audit event
 * (batch-writer.ts); at the end of the project's window this takes them all out and makes one
 * event of them. Taking out and making the event commit together, so each failure is reported once.
 */
interface WaitingRow {
  audit_id: string;
  ts: string;
  request_id: string;
  status: number;
  error_code: string | null;
  model: string | null;
  provider: string | null;
  key_id: string | null;
  endpoint: string | null;
  kind: 'failed' | 'guardrail';
  guardrails: string[] | null;
}

/**
 * The project's window: one gateway.request.failed event for its failed requests and one
 * guardrail.blocked event for the requests its guardrails blocked (each only when it has any).
 */
export async function reportFailedRequests(db: Db, projectId: string): Promise<RecordedEvent[]> {
  return db.begin(async (tx) => {
    const rows = await tx<WaitingRow[]>`
      delete from webhook_failed_requests where project_id = ${projectId}
      returning audit_id, ts::text as ts, request_id, status, error_code, model, provider, key_id, endpoint, kind, to_jsonb(guardrails) as guardrails`;
    rows.sort((a, b) => Number(a.ts) - Number(b.ts) || (a.audit_id < b.audit_id ? -1 : 1));
    const events: RecordedEvent[] = [];
    const failed = rows.filter((r) => r.kind === 'failed');
    const blocked = rows.filter((r) => r.kind === 'guardrail');
    if (failed.length > 0) events.push(await failedEvent(tx, projectId, failed));
    if (blocked.length > 0) {
      const requests: BlockedRequestSummary[] = blocked.slice(0, MAX_FAILED_REQUESTS_PER_EVENT).map((r) => ({ ...summary(r), guardrails: r.guardrails ?? [] }));
      events.push(await recordEvent(tx, { projectId, type: 'guardrail.blocked', data: { project_id: projectId, count: blocked.length, omitted: blocked.length - requests.length, requests } }));
    }
    return events;
  });
}

function summary(r: WaitingRow): FailedRequestSummary {
  return { request_id: r.request_id, timestamp: Number(r.ts), status: r.status, error_code: r.error_code, model: r.model, provider: r.provider, key_id: r.key_id, endpoint: r.endpoint };
}

async function failedEvent(tx: Parameters<typeof recordEvent>[0], projectId: string, rows: WaitingRow[]): Promise<RecordedEvent> {
  const requests: FailedRequestSummary[] = rows.slice(0, MAX_FAILED_REQUESTS_PER_EVENT).map(summary);
  return recordEvent(tx, {
    projectId,
    type: 'gateway.request.failed',
    data: { project_id: projectId, count: rows.length, omitted: rows.length - requests.length, requests },
  });
}
