import type { AppContext } from '../context.js';
import { purgeFilesOfDeletedProjects } from '../db/batch-files.js';
import { purgeBatchesOfDeletedProjects } from '../db/batches.js';

/**
 * How long a deleted project's batches and files are kept. Nothing serves them once the project is
 * deleted (its keys and management routes are gone), but an operator looking into the deletion
 * still finds them in the database for a while, as the records stay too. No setting of the gateway
 * covers deleted projects' data, so this is fixed.
 */
export const DELETED_PROJECT_BATCH_RETENTION_DAYS = 30;
/** Hourly: a day late or early is nothing against thirty, and each pass is a few short deletes. */
export const BATCH_PURGE_EVERY_MS = 60 * 60 * 1000;
/** Rows one delete removes: a batch or file may hold tens of thousands of lines, all deleted with it. */
export const BATCH_PURGE_ROWS = 10;
/** Deletes of each table one pass runs at most; the rest is carried on at the next pass. */
const MAX_DELETES = 100;

export interface BatchPurgeCount {
  batches: number;
  files: number;
}

/**
 * Deletes the batches and files (with their lines) of projects deleted more than
 * DELETED_PROJECT_BATCH_RETENTION_DAYS ago, every hour, a few rows per statement so a large
 * project never holds locks for long. Every control plane runs it; the deletes skip rows another
 * one is deleting.
 */
export class BatchPurger {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<BatchPurgeCount> | null = null;

  constructor(
    private readonly ctx: Pick<AppContext, 'sql' | 'log'>,
    private readonly retentionDays = DELETED_PROJECT_BATCH_RETENTION_DAYS,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      this.run().catch((err: Error) => this.ctx.log.warn({ err: { message: err.message } }, "deleted projects' batches purge failed"));
    }, BATCH_PURGE_EVERY_MS);
    this.timer.unref();
  }

  /** One pass (none while another is under way on this control plane); what it deleted. */
  run(): Promise<BatchPurgeCount> {
    this.running ??= this.pass().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async pass(): Promise<BatchPurgeCount> {
    const purged: BatchPurgeCount = { batches: 0, files: 0 };
    for (let i = 0; i < MAX_DELETES; i++) {
      // Read each time: the pool is replaced after PostgreSQL came back.
      const deleted = await purgeBatchesOfDeletedProjects(this.ctx.sql, this.retentionDays, BATCH_PURGE_ROWS);
      purged.batches += deleted;
      if (deleted < BATCH_PURGE_ROWS) break;
    }
    for (let i = 0; i < MAX_DELETES; i++) {
      const deleted = await purgeFilesOfDeletedProjects(this.ctx.sql, this.retentionDays, BATCH_PURGE_ROWS);
      purged.files += deleted;
      if (deleted < BATCH_PURGE_ROWS) break;
    }
    if (purged.batches + purged.files > 0) this.ctx.log.debug(purged, "deleted projects' batches and files purged");
    return purged;
  }

  /** Stops the timer and waits for a pass under way, so the pool can be ended after it. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => {});
  }
}
