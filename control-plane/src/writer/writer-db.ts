import type { StartupWait } from '@gateway/shared';
import { connectDb, type Db } from '../db/connect.js';

/** One pool and the signal that tells its users it has been replaced. */
export interface PoolGeneration {
  sql: Db;
  /** Aborted when a newer pool replaces this one: writes still waiting on it give up. */
  signal: AbortSignal;
}

/**
 * The writer's PostgreSQL pool, replaceable. postgres.js 3.4 can leave a connection unusable after
 * the server dropped it mid-transaction (a reconnect that never completes, a statement that never
 * settles), so after an outage the writer does not nurse its old pool back: it opens a new one,
 * proven by a query, lets the old one go, and tells the writes still waiting on the old one to
 * give up rather than hold their batches until a timeout.
 */
export class WriterDb {
  private generation: PoolGeneration & { controller: AbortController };

  private constructor(
    private readonly url: string,
    private readonly max: number,
    pool: Db,
  ) {
    this.generation = WriterDb.wrap(pool);
  }

  private static wrap(sql: Db) {
    const controller = new AbortController();
    return { sql, signal: controller.signal, controller };
  }

  /** At start: `wait` says how long PostgreSQL may take to answer. */
  static async open(url: string, max: number, wait?: StartupWait): Promise<WriterDb> {
    return new WriterDb(url, max, await connectDb(url, { max, fetchTypes: false, ...(wait ? { wait } : {}) }));
  }

  get current(): PoolGeneration {
    return this.generation;
  }

  get sql(): Db {
    return this.generation.sql;
  }

  /** Resolves true once a fresh pool answers and has replaced the old one; false if Postgres does not answer. */
  async renew(): Promise<boolean> {
    let fresh: Db;
    try {
      fresh = await connectDb(this.url, { max: this.max, fetchTypes: false });
    } catch {
      return false;
    }
    const old = this.generation;
    this.generation = WriterDb.wrap(fresh);
    old.controller.abort();
    void old.sql.end({ timeout: 5 }).catch(() => {});
    return true;
  }

  async end(): Promise<void> {
    this.generation.controller.abort();
    await this.generation.sql.end({ timeout: 5 });
  }
}
