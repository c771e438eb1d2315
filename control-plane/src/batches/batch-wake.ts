import { Job, Queue } from 'bullmq';
import type { AppContext } from '../context.js';

/**
 * A batch cancelled here (the management API) whose job waits in the batches queue's delayed set
 * for its providers' own batches (provider-run batches) is run now, so its provider batches are
 * cancelled at once rather than at its next poll. Best effort: a job not waiting is left as it is,
 * and a failure only waits for that poll. One Queue per control plane, on its Redis connection.
 */
const queues = new WeakMap<AppContext, Queue>();

export async function wakeBatch(ctx: AppContext, batchId: string): Promise<void> {
  let queue = queues.get(ctx);
  if (queue === undefined) {
    queue = new Queue(ctx.keys.batchesQueue, { connection: ctx.redis, prefix: ctx.keys.bullPrefix });
    queue.on('error', () => {});
    queues.set(ctx, queue);
  }
  try {
    const job = await Job.fromId(queue, batchId);
    if (job !== undefined && (await job.isDelayed())) await job.promote();
  } catch {
    // The next poll runs it anyway.
  }
}
