import type { AppContext } from '../context.js';
import { purgeExpiredResponses } from '../db/stored-responses.js';

/** How often expired stored responses are looked for. */
export const PURGE_EVERY_MS = 60_000;
/** Rows one delete removes: short statements, so a large backlog never holds locks for long. */
export const PURGE_BATCH = 1_000;
/** Batches one pass runs at most; a backlog larger than that is carried on at the next pass. */
const MAX_BATCHES = 50;

/**
 * Deletes expired stored responses (migration 0020) every minute, in batches. Expired rows are
 * never answered anyway (getStoredResponse reads only unexpired ones): purging only frees their
 * space. Every control plane runs it; the batches skip rows another one is deleting. Its own
 * timer rather than the six-hourly partition upkeep: a day of expiries in one pass would be one
 * long burst of deletes.
 */
export class StoredResponsePurger {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | null = null;

  constructor(private readonly ctx: Pick<AppContext, 'sql' | 'log'>) {}

  start(): void {
    this.timer = setInterval(() => {
      this.run().catch((err: Error) => this.ctx.log.warn({ err: { message: err.message } }, 'stored responses purge failed'));
    }, PURGE_EVERY_MS);
    this.timer.unref();
  }

  /** One pass (none while another is under way on this control plane); the rows it deleted. */
  run(): Promise<number> {
    this.running ??= this.pass().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async pass(): Promise<number> {
    let purged = 0;
    for (let batch = 0; batch < MAX_BATCHES; batch++) {
      // Read each time: the pool is replaced after PostgreSQL came back.
      const deleted = await purgeExpiredResponses(this.ctx.sql, PURGE_BATCH);
      purged += deleted;
      if (deleted < PURGE_BATCH) break;
    }
    if (purged > 0) this.ctx.log.debug({ purged }, 'expired stored responses purged');
    return purged;
  }

  /** Stops the timer and waits for a pass under way, so the pool can be ended after it. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => {});
  }
}
