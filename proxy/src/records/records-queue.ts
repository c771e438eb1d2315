import { Queue, type JobsOptions } from 'bullmq';
import { RECORD_JOB_NAME, RECORD_JOB_OPTIONS, type RecordBatchJobData, type RedisKeys, type RedisClient } from '@gateway/shared';

const JOB_OPTIONS: Omit<JobsOptions, 'jobId'> = RECORD_JOB_OPTIONS;

/** The producer's end of the records queue: adds one job per batch over the caller's connection. */
export class RecordsQueue {
  private queue: Queue;
  private closed = false;

  constructor(
    private readonly connection: RedisClient,
    private readonly keys: RedisKeys,
    /** BullMQ prefix of the record queue this producer sends to (RedisKeys.recordsQueuePrefix). */
    private readonly prefix: string = keys.bullPrefix,
  ) {
    this.queue = this.newQueue();
  }

  /** Resolves once Redis acknowledged the job. `jobId` makes adding the same batch twice harmless. */
  add(jobId: string, data: RecordBatchJobData): Promise<unknown> {
    return this.queue.add(RECORD_JOB_NAME, data, { ...JOB_OPTIONS, jobId });
  }

  /** The Redis key of a job's hash, present until a writer completes the job. */
  jobKey(jobId: string): string {
    return this.queue.toKey(jobId);
  }

  /**
   * A BullMQ queue whose start-up check failed (Redis went away in that moment) rejects every add
   * from then on; a fresh one over the same connection starts clean. Called after a failed add.
   */
  renewIfBroken(): void {
    const queue = this.queue;
    queue.waitUntilReady().catch(() => {
      if (this.closed || this.queue !== queue) return;
      this.queue = this.newQueue();
      void queue.close().catch(() => {});
    });
  }

  /** Leaves the connection open: it belongs to the caller. Waits for Redis while it is away. */
  async close(): Promise<void> {
    this.closed = true;
    await this.queue.close().catch(() => {});
  }

  private newQueue(): Queue {
    const queue = new Queue(this.keys.recordsQueue, { connection: this.connection, prefix: this.prefix });
    // The queue re-emits connection errors; the owner of the connection logs those.
    queue.on('error', () => {});
    return queue;
  }
}
