import type { Queryable } from '../db/connect.js';
import type { WebhookEventType } from './event-types.js';
import { newEventId } from './signing.js';

/**
 * Making an event: one row with the exact body every endpoint will receive, and one pending
 * delivery per enabled endpoint of the project subscribed to its type, in one statement (inside
 * the caller's transaction when it has one). With no such endpoint nothing is written. The
 * deliveries are then handed to the queue (WebhookQueue.deliver); if that hand-over is lost, the
 * writers' sweep finds them pending in Postgres and hands them over again.
 */
export interface NewEvent {
  projectId: string;
  type: WebhookEventType;
  data: unknown;
  /** The event id (msg_…); a new one by default. */
  id?: string;
  /** When it happened (the payload's `timestamp`); now by default. */
  occurredAt?: Date;
}

export interface RecordedEvent {
  eventId: string;
  projectId: string;
  /** One per endpoint the event goes to; empty when nobody subscribed. */
  deliveryIds: string[];
}

export function eventBody(type: string, occurredAt: Date, data: unknown): string {
  return JSON.stringify({ type, timestamp: occurredAt.toISOString(), data });
}

export async function recordEvent(sql: Queryable, event: NewEvent): Promise<RecordedEvent> {
  const id = event.id ?? newEventId();
  const occurredAt = event.occurredAt ?? new Date();
  const payload = eventBody(event.type, occurredAt, event.data);
  const rows = await sql<{ id: string }[]>`
    with hooks as (
      select id from webhooks where project_id = ${event.projectId} and enabled and ${event.type}::text = any (events)
    ), made as (
      insert into webhook_events (id, project_id, type, payload)
      select ${id}, ${event.projectId}, ${event.type}, ${payload} where exists (select 1 from hooks)
      returning id
    )
    insert into webhook_deliveries (webhook_id, event_id)
    select hooks.id, made.id from hooks cross join made
    returning id`;
  return { eventId: id, projectId: event.projectId, deliveryIds: rows.map((r) => r.id) };
}
