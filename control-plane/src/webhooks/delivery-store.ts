import { writeAudit } from '../db/audit-writer.js';
import type { Db, Queryable } from '../db/connect.js';
import { failPendingDeliveries } from '../db/webhooks.js';

/**
 * The delivery rows as the webhook worker moves them: claim an attempt, then record how it went.
 *
 * A claim counts the attempt and leases the delivery (next_attempt_at moves past the attempt's
 * longest possible end), so a second job for the same delivery (a hand-over repeated by the sweep,
 * a job taken over from a writer that died) finds nothing to claim while the attempt runs. The
 * due time is compared with a little slack, since the queue's clock and Postgres's may differ.
 */
export interface ClaimedDelivery {
  id: string;
  attempt: number;
  webhookId: string;
  projectId: string;
  url: string;
  secret: string;
  /** The webhook is enabled and its project not deleted. */
  live: boolean;
  eventId: string;
  body: string;
}

export async function claimDelivery(sql: Queryable, deliveryId: string, leaseMs: number): Promise<ClaimedDelivery | null> {
  const rows = await sql<{ attempts: number; webhook_id: string; project_id: string; url: string; secret: string; live: boolean; event_id: string; payload: string }[]>`
    update webhook_deliveries d
    set attempts = d.attempts + 1, last_attempt_at = now(), next_attempt_at = now() + ${leaseMs}::int * interval '1 millisecond'
    from webhooks w, webhook_events e, projects p
    where d.id = ${deliveryId} and d.status = 'pending' and d.next_attempt_at <= now() + interval '5 seconds'
      and w.id = d.webhook_id and e.id = d.event_id and p.id = w.project_id
    returning d.attempts, d.webhook_id, w.project_id, w.url, w.secret, w.enabled and p.deleted_at is null as live, e.id as event_id, e.payload`;
  const row = rows[0];
  if (row === undefined) return null;
  return {
    id: deliveryId,
    attempt: row.attempts,
    webhookId: row.webhook_id,
    projectId: row.project_id,
    url: row.url,
    secret: row.secret,
    live: row.live,
    eventId: row.event_id,
    body: row.payload,
  };
}

export async function markDelivered(sql: Queryable, claim: ClaimedDelivery, status: number): Promise<void> {
  await sql`
    update webhook_deliveries set status = 'delivered', last_status = ${status}, last_error = null, next_attempt_at = now()
    where id = ${claim.id} and attempts = ${claim.attempt}`;
  await sql`update webhooks set consecutive_failures = 0 where id = ${claim.webhookId} and consecutive_failures <> 0`;
}

/** Records a failed attempt that will be tried again; false when the delivery was settled meanwhile (its webhook disabled). */
export async function markRetrying(sql: Queryable, claim: ClaimedDelivery, result: { status: number | null; error: string }, delayMs: number): Promise<boolean> {
  const rows = await sql`
    update webhook_deliveries
    set last_status = ${result.status}, last_error = ${result.error}, next_attempt_at = now() + ${delayMs}::int * interval '1 millisecond'
    where id = ${claim.id} and attempts = ${claim.attempt} and status = 'pending'
    returning id`;
  return rows.length > 0;
}

export interface FinalFailure {
  /** The webhook was disabled by this failure. */
  disabled: boolean;
}

/**
 * Records the last failed attempt of a delivery. It counts towards the webhook's consecutive
 * failed deliveries; at `disableAfter` (or at once on 410 Gone) the webhook is disabled, its
 * pending deliveries end, and a `webhook.disabled` audit event says why.
 */
export async function markFailed(
  db: Db,
  claim: ClaimedDelivery,
  result: { status: number | null; error: string; gone: boolean },
  disableAfter: number,
): Promise<FinalFailure> {
  return db.begin(async (tx) => {
    const settled = await tx`
      update webhook_deliveries set status = 'failed', last_status = ${result.status}, last_error = ${result.error}, next_attempt_at = now()
      where id = ${claim.id} and attempts = ${claim.attempt}
      returning id`;
    if (settled.length === 0) return { disabled: false };
    const [count] = await tx<{ consecutive_failures: number }[]>`
      update webhooks set consecutive_failures = consecutive_failures + 1 where id = ${claim.webhookId}
      returning consecutive_failures`;
    const failures = count?.consecutive_failures ?? 0;
    if (!result.gone && failures < disableAfter) return { disabled: false };
    const reason = result.gone
      ? 'The endpoint answered 410 Gone.'
      : `${failures} deliveries in a row failed after every attempt (the last: ${result.error}).`;
    const disabled = await disableWebhook(tx, claim, reason, result.status ?? 0);
    return { disabled };
  });
}

/** True when this call disabled it (false: it was disabled already). */
async function disableWebhook(tx: Queryable, claim: ClaimedDelivery, reason: string, status: number): Promise<boolean> {
  const rows = await tx`
    update webhooks set enabled = false, disabled_reason = ${reason}
    where id = ${claim.webhookId} and enabled returning id`;
  if (rows.length === 0) return false;
  await failPendingDeliveries(tx, claim.webhookId, 'the webhook was disabled');
  // No HTTP request is behind this: the request id is the event whose delivery failed last.
  await writeAudit(
    tx,
    { type: 'webhook.disabled', outcome: 'error', status, projectId: claim.projectId, actor: null, target: { type: 'webhook', id: claim.webhookId } },
    { requestId: claim.eventId, clientIp: null, userAgent: null, latencyMs: 0 },
  );
  return true;
}

/** A claimed delivery whose webhook is disabled or gone is settled without an attempt. */
export async function markSkipped(sql: Queryable, claim: ClaimedDelivery, reason: string): Promise<void> {
  await sql`
    update webhook_deliveries set status = 'failed', attempts = attempts - 1, last_error = ${reason}, next_attempt_at = now()
    where id = ${claim.id} and attempts = ${claim.attempt}`;
}
