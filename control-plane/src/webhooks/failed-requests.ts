import type { Db } from '../db/connect.js';
import { recordEvent, type RecordedEvent } from './event-outbox.js';
import { MAX_FAILED_REQUESTS_PER_EVENT, type FailedRequestSummary } from './event-types.js';

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
}

export async function reportFailedRequests(db: Db, projectId: string): Promise<RecordedEvent | null> {
  return db.begin(async (tx) => {
    const rows = await tx<WaitingRow[]>`
      delete from webhook_failed_requests where project_id = ${projectId}
      returning audit_id, ts::text as ts, request_id, status, error_code, model, provider, key_id, endpoint`;
    if (rows.length === 0) return null;
    rows.sort((a, b) => Number(a.ts) - Number(b.ts) || (a.audit_id < b.audit_id ? -1 : 1));
    const requests: FailedRequestSummary[] = rows.slice(0, MAX_FAILED_REQUESTS_PER_EVENT).map((r) => ({
      request_id: r.request_id,
      timestamp: Number(r.ts),
      status: r.status,
      error_code: r.error_code,
      model: r.model,
      provider: r.provider,
      key_id: r.key_id,
      endpoint: r.endpoint,
    }));
    return recordEvent(tx, {
      projectId,
      type: 'gateway.request.failed',
      data: { project_id: projectId, count: rows.length, omitted: rows.length - requests.length, requests },
    });
  });
}
