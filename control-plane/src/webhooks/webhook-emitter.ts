import type { Logger } from 'pino';
import type { Queryable } from '../db/connect.js';
import { recordEvent, type NewEvent } from './event-outbox.js';
import type { WebhookQueue } from './webhook-queue.js';

/**
 * How the control plane's routes announce a management action (key.created, key.deleted,
 * project.updated): after the action committed, the event is recorded and its deliveries queued.
 * It never fails the action: a lost hand-over to Redis leaves the deliveries pending in Postgres,
 * where the writers' sweep picks them up; only a Postgres failure here loses the event, and says so.
 */
export class WebhookEmitter {
  constructor(
    private readonly sql: () => Queryable,
    private readonly queue: WebhookQueue,
    private readonly log: Logger,
  ) {}

  async emit(event: NewEvent): Promise<void> {
    let deliveryIds: string[];
    try {
      ({ deliveryIds } = await recordEvent(this.sql(), event));
    } catch (err) {
      this.log.error({ err: { message: (err as Error).message }, type: event.type, project_id: event.projectId }, 'webhook event could not be recorded');
      return;
    }
    try {
      await this.queue.deliver(event.projectId, deliveryIds);
    } catch (err) {
      this.log.warn({ err: { message: (err as Error).message }, deliveries: deliveryIds.length }, 'webhook deliveries not queued; the writers will pick them up');
    }
  }

  /** Queues deliveries recorded in a transaction of the caller's (a lost hand-over is swept up). */
  async deliver(projectId: string, deliveryIds: string[]): Promise<void> {
    if (deliveryIds.length === 0) return;
    await this.queue.deliver(projectId, deliveryIds).catch(() => {});
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
