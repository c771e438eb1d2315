import type { RedisClient } from '@gateway/shared';
import type { OutgoingBatch } from './outgoing-batch.js';
import type { SentBatches } from './sent-batches.js';

const CHECK_MAX = 500;

export interface WriteConfirmationOptions {
  connection: RedisClient;
  sent: SentBatches;
  jobKey(jobId: string): string;
  intervalMs: number;
  /** Batches Redis may have lost, oldest first, to be sent again. */
  resend(batches: OutgoingBatch[]): void;
}

/** The run_id in the reply to INFO server. */
export function parseRunId(info: string): string | undefined {
  return /run_id:(\w+)/.exec(info)?.[1];
}

/**
 * Asks Redis every `intervalMs` (and on check()) which sent batches a writer has taken, so
 * SentBatches can let them go or have them sent again.
 */
export class WriteConfirmation {
  private readonly timer: NodeJS.Timeout;
  private checking = false;
  private stopped = false;

  constructor(private readonly options: WriteConfirmationOptions) {
    this.timer = setInterval(() => void this.check(), options.intervalMs);
    this.timer.unref();
  }

  /**
   * Asks, in one MULTI, for the run_id and whether the oldest sent jobs still exist. A
   * transaction's replies all come from the one server that ran EXEC (a pipeline cut by a
   * reconnect could mix two), so "gone under the run_id it was added to" means completed, never
   * lost. On a cluster the transaction runs on the node owning the queue's slot (its keys pick
   * the node), so the run_id is that node's: a failover to its replica changes it.
   */
  async check(): Promise<void> {
    const { connection, sent, jobKey } = this.options;
    if (this.checking || this.stopped || connection.status !== 'ready') return;
    this.checking = true;
    try {
      const checked = sent.oldest(CHECK_MAX);
      const transaction = connection.multi().info('server');
      for (const batch of checked) transaction.exists(jobKey(batch.id));
      // With no job to ask about, a key of the queue still routes a cluster's transaction to the
      // queue's node (INFO alone would go to any node, and its run_id would mean nothing).
      if (checked.length === 0) transaction.exists(jobKey('0'));
      const replies = (await transaction.exec()) ?? [];
      const [infoErr, info] = replies[0] ?? [new Error('no reply'), null];
      if (infoErr || typeof info !== 'string') return;
      const runId = parseRunId(info);
      if (runId === undefined) return;
      const jobGone = checked.map((_, i) => {
        const [err, exists] = replies[i + 1] ?? [new Error('no reply'), null];
        return !err && exists === 0;
      });
      const resend = sent.settle(runId, checked, jobGone);
      if (resend.length > 0) this.options.resend(resend);
    } catch {
      // Redis went away mid-check; the next tick asks again.
    } finally {
      this.checking = false;
    }
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }
}
