import type { DeliveryStatus, Webhook, WebhookDelivery, WebhookEventType } from '@gateway/shared';
import type { Fragment } from 'postgres';
import { one, type Queryable } from './connect.js';

/** A project's webhook endpoints and their delivery log. The signing secret never leaves this file except to the sender. */
interface WebhookRow {
  id: string;
  project_id: string;
  url: string;
  // The insert is checked against the API's list of event types.
  events: WebhookEventType[];
  enabled: boolean;
  disabled_reason: string | null;
  created_at: Date;
}

/** As the API shows it: declared once, in shared (management-api/types.ts). */
export type { Webhook };

const COLUMNS = 'id, project_id, url, events, enabled, disabled_reason, created_at';

function toWebhook(row: WebhookRow): Webhook {
  return { ...row, created_at: row.created_at.toISOString() };
}

/** Endpoints one project may have. */
export const MAX_WEBHOOKS_PER_PROJECT = 20;

export async function countWebhooks(sql: Queryable, projectId: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from webhooks where project_id = ${projectId}`;
  return row?.n ?? 0;
}

export async function insertWebhook(
  sql: Queryable,
  webhook: { projectId: string; url: string; events: readonly string[]; secret: string; createdBy: string },
): Promise<Webhook> {
  const row = one(await sql<WebhookRow[]>`
    insert into webhooks (project_id, url, events, secret, created_by)
    values (${webhook.projectId}, ${webhook.url}, ${sql.array(webhook.events as string[])}::text[], ${webhook.secret}, ${webhook.createdBy})
    returning ${sql.unsafe(COLUMNS)}`);
  return toWebhook(row);
}

export async function listWebhooks(sql: Queryable, projectId: string): Promise<Webhook[]> {
  const rows = await sql<WebhookRow[]>`
    select ${sql.unsafe(COLUMNS)} from webhooks where project_id = ${projectId} order by created_at, id`;
  return rows.map(toWebhook);
}

export async function findWebhook(sql: Queryable, projectId: string, webhookId: string, options: { lock?: boolean } = {}): Promise<Webhook | null> {
  const rows = await sql<WebhookRow[]>`
    select ${sql.unsafe(COLUMNS)} from webhooks where id = ${webhookId} and project_id = ${projectId}
    ${options.lock ? sql`for update` : sql``}`;
  return rows[0] === undefined ? null : toWebhook(rows[0]);
}

export async function deleteWebhook(sql: Queryable, projectId: string, webhookId: string): Promise<boolean> {
  const rows = await sql`delete from webhooks where id = ${webhookId} and project_id = ${projectId} returning id`;
  return rows.length > 0;
}

export interface WebhookChange {
  enabled?: boolean;
  events?: readonly string[];
  disabledReason?: string | null;
}

/** Re-enabling starts the failure count afresh. */
export async function updateWebhook(sql: Queryable, projectId: string, webhookId: string, change: WebhookChange): Promise<Webhook | null> {
  const events = change.events === undefined ? null : sql.array(change.events as string[]);
  const rows = await sql<WebhookRow[]>`
    update webhooks set
      enabled = coalesce(${change.enabled ?? null}::boolean, enabled),
      events = coalesce(${events}::text[], events),
      disabled_reason = case when ${change.enabled ?? null}::boolean is null then disabled_reason
                             when ${change.enabled ?? null}::boolean then null
                             else ${change.disabledReason ?? null} end,
      consecutive_failures = case when ${change.enabled ?? null}::boolean then 0 else consecutive_failures end
    where id = ${webhookId} and project_id = ${projectId}
    returning ${sql.unsafe(COLUMNS)}`;
  return rows[0] === undefined ? null : toWebhook(rows[0]);
}

/**
 * Ends the pending deliveries of a webhook that was just disabled: nothing is sent to a disabled
 * endpoint, and re-enabling it does not replay what happened meanwhile.
 */
export async function failPendingDeliveries(sql: Queryable, webhookId: string, reason: string): Promise<number> {
  const rows = await sql`
    update webhook_deliveries set status = 'failed', last_error = ${reason}, next_attempt_at = now()
    where webhook_id = ${webhookId} and status = 'pending' returning id`;
  return rows.length;
}

export type { DeliveryStatus };

interface DeliveryRow {
  id: string;
  event_id: string;
  event_type: WebhookEventType;
  status: DeliveryStatus;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  created_at: Date;
  last_attempt_at: Date | null;
  next_attempt_at: Date;
}

export type Delivery = WebhookDelivery;

export function toDelivery(row: DeliveryRow): Delivery {
  return {
    id: row.id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status,
    attempts: row.attempts,
    last_status: row.last_status,
    last_error: row.last_error,
    created_at: row.created_at.toISOString(),
    last_attempt_at: row.last_attempt_at?.toISOString() ?? null,
    next_attempt_at: row.status === 'pending' ? row.next_attempt_at.toISOString() : null,
  };
}

export interface DeliveryListQuery {
  webhookId: string;
  status: DeliveryStatus | undefined;
  fetch: number;
  /** The last row of the previous page (created_at in ms, id); newest first. */
  before: { ts: number; id: string } | null;
}

/** The delivery log, newest first, keyset-paged on (created_at, id). */
export async function listDeliveries(sql: Queryable, query: DeliveryListQuery): Promise<DeliveryRow[]> {
  const conditions: Fragment[] = [sql`d.webhook_id = ${query.webhookId}`];
  if (query.status !== undefined) conditions.push(sql`d.status = ${query.status}`);
  if (query.before !== null) conditions.push(sql`(d.created_at, d.id) < (${new Date(query.before.ts)}, ${query.before.id}::uuid)`);
  return sql<DeliveryRow[]>`
    select d.id, d.event_id, e.type as event_type, d.status, d.attempts, d.last_status, d.last_error,
           d.created_at, d.last_attempt_at, d.next_attempt_at
    from webhook_deliveries d join webhook_events e on e.id = d.event_id
    where ${conditions.reduce((all, c) => sql`${all} and ${c}`)}
    order by d.created_at desc, d.id desc
    limit ${query.fetch}`;
}
