import { Job, Queue } from 'bullmq';
import type { RedisClient, RedisKeys } from '@gateway/shared';

/**
 * A batch cancelled here (the management API) whose job waits in the batches queue's delayed set
 * for its providers' own batches (provider-run batches) is run now, so its provider batches are
 * cancelled at once rather than at its next poll. Best effort: a job not waiting is left as it is,
 * and a failure only waits for that poll. One Queue per control plane, on its Redis connection,
 * made at the first cancel and closed with the server.
 */
export class BatchWaker {
  private queue: Queue | null = null;

  constructor(
    private readonly connection: RedisClient,
    private readonly keys: RedisKeys,
  ) {}

  async wake(batchId: string): Promise<void> {
    if (this.queue === null) {
      this.queue = new Queue(this.keys.batchesQueue, { connection: this.connection, prefix: this.keys.bullPrefix });
      this.queue.on('error', () => {});
    }
    try {
      const job = await Job.fromId(this.queue, batchId);
      if (job !== undefined && (await job.isDelayed())) await job.promote();
    } catch {
      // The next poll runs it anyway.
    }
  }

  /** The connection is the caller's: only the Queue's own state goes. */
  async close(): Promise<void> {
    await this.queue?.close().catch(() => {});
    this.queue = null;
  }
}
