import { Queue } from 'bullmq';
import type { RedisKeys, RedisClient } from '@gateway/shared';

/**
 * The producer side of RedisKeys.webhooksQueue, used by the control plane and the writers. Two
 * kinds of job, both with ids that make a repeated hand-over a no-op while the first is queued:
 *
 * - `deliver` {delivery_id, project_id}: one attempt of one delivery, id `d-<delivery>-<attempt>`;
 *   the project lets the worker share its attempts fairly between projects (jobs queued by an
 *   older version have none and are simply run);
 * - `failed-requests` {project_id}: the gateway.request.failed event of one project's window of
 *   `windowMs`, id `f-<project>-<window number>`, delayed to the window's end, so every batch of
 *   failures landing in the window joins the same job and the project gets at most one event per
 *   window. Completed ones are kept an hour to keep their id taken.
 *
 * Postgres holds the truth (pending deliveries, waiting failures); a job lost with Redis is made
 * again by the writers' sweep.
 */
export const DELIVER_JOB = 'deliver';
export const FAILED_REQUESTS_JOB = 'failed-requests';

export interface DeliverJobData {
  delivery_id: string;
  project_id?: string;
}

export interface FailedRequestsJobData {
  project_id: string;
}

export class WebhookQueue {
  readonly queue: Queue;

  constructor(connection: RedisClient, keys: RedisKeys) {
    this.queue = new Queue(keys.webhooksQueue, { connection, prefix: keys.bullPrefix });
    this.queue.on('error', () => {});
  }

  /** Queues attempt `attempt` of each delivery of the project, after `delayMs`. */
  async deliver(projectId: string, deliveryIds: readonly string[], attempt = 1, delayMs = 0): Promise<void> {
    if (deliveryIds.length === 0) return;
    await this.queue.addBulk(
      deliveryIds.map((id) => ({
        name: DELIVER_JOB,
        data: { delivery_id: id, project_id: projectId } satisfies DeliverJobData,
        opts: { jobId: `d-${id}-${attempt}`, delay: Math.max(0, delayMs), attempts: 1, removeOnComplete: true, removeOnFail: true },
      })),
    );
  }

  /** Makes sure the project's current failure window ends with a gateway.request.failed event. */
  async failedRequests(projectId: string, windowMs: number, now = Date.now()): Promise<void> {
    const window = Math.floor(now / windowMs);
    await this.queue.add(FAILED_REQUESTS_JOB, { project_id: projectId } satisfies FailedRequestsJobData, {
      jobId: `f-${projectId}-${window}`,
      delay: (window + 1) * windowMs - now,
      attempts: 1,
      removeOnComplete: { age: 3600 },
      removeOnFail: true,
    });
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
