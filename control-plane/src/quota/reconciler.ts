import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { Counter, Gauge } from 'prom-client';
import { quotaPeriodId } from '@gateway/shared';
import type { AppContext } from '../context.js';
import { listLiveProjects } from '../db/projects.js';
import { settledInPeriod } from './used-tokens.js';

/**
 * Keeps the quota ledgers in Redis true to Postgres, which holds every usage record:
 * - a ledger Redis lost (restart without persistence) is started again from Postgres's count;
 * - `charged` that differs from Postgres's count by the same amount on two runs in a row while
 *   the record queue is empty is drift (a lost settlement, a reset counter): reported, corrected;
 * - leases held by proxies that are no longer alive are dropped, so a crashed proxy does not
 *   keep part of a quota forever.
 * One control plane runs it at a time (a Redis lock), every QUOTA_RECONCILE_MS.
 */
export class QuotaReconciler {
  private readonly lastDrift = new Map<string, number>();
  private readonly queue: Queue;
  private readonly owner = randomUUID();
  private timer: NodeJS.Timeout | undefined;
  private readonly driftGauge: Gauge;
  private readonly corrections: Counter;
  private readonly deadLeases: Counter;

  constructor(
    private readonly ctx: Pick<AppContext, 'sql' | 'redis' | 'keys' | 'log' | 'metrics'>,
    private readonly intervalMs: number,
  ) {
    this.queue = new Queue(ctx.keys.recordsQueue, { connection: ctx.redis, prefix: ctx.keys.bullPrefix });
    this.driftGauge = new Gauge({
      name: 'control_plane_quota_drift_tokens',
      help: 'Sum over projects of |charged in Redis - settled in Postgres| at the last reconciliation',
      registers: [ctx.metrics],
    });
    this.corrections = new Counter({ name: 'control_plane_quota_corrections_total', help: 'Quota ledgers corrected to Postgres', registers: [ctx.metrics] });
    this.deadLeases = new Counter({ name: 'control_plane_quota_dead_leases_total', help: 'Leases dropped because their proxy is gone', registers: [ctx.metrics] });
  }

  start(): void {
    this.timer = setInterval(() => {
      this.run().catch((err: Error) => this.ctx.log.warn({ err: { message: err.message } }, 'quota reconciliation failed'));
    }, this.intervalMs);
    this.timer.unref();
  }

  /** One pass; returns false when another control plane holds the lock. */
  async run(now: number = Date.now()): Promise<boolean> {
    const { redis, keys } = this.ctx;
    const locked = await redis.set(keys.reconcileLock, this.owner, 'PX', Math.max(this.intervalMs * 2, 10_000), 'NX');
    if (locked === null) return false;
    try {
      const counts = await this.queue.getJobCounts('waiting', 'delayed', 'active', 'prioritized');
      const drained = Object.values(counts).every((n) => n === 0);
      let driftTotal = 0;
      for (const project of await listLiveProjects(this.ctx.sql)) {
        if (project.quota_tokens === null) continue;
        const period = quotaPeriodId(project.quota_period, now);
        const ledgerKey = keys.quotaLedger(project.id, period);
        const ledger = await redis.hgetall(ledgerKey);
        const settled = await settledInPeriod(this.ctx, project.id, period);
        await this.dropDeadLeases(ledgerKey, ledger);
        if (ledger.charged === undefined) {
          await redis.hsetnx(ledgerKey, 'charged', settled);
          this.lastDrift.delete(ledgerKey);
          continue;
        }
        const drift = Number(ledger.charged) - settled;
        driftTotal += Math.abs(drift);
        if (drift !== 0 && drained && this.lastDrift.get(ledgerKey) === drift) {
          await redis.hincrby(ledgerKey, 'charged', -drift);
          this.corrections.inc();
          this.ctx.log.warn({ project_id: project.id, period, drift }, 'quota ledger corrected to the settled usage');
          this.lastDrift.delete(ledgerKey);
        } else if (drift !== 0) {
          this.lastDrift.set(ledgerKey, drift);
        } else {
          this.lastDrift.delete(ledgerKey);
        }
      }
      this.driftGauge.set(driftTotal);
      return true;
    } finally {
      // Release only our own lock.
      if ((await redis.get(keys.reconcileLock)) === this.owner) await redis.del(keys.reconcileLock);
    }
  }

  private async dropDeadLeases(ledgerKey: string, ledger: Record<string, string>): Promise<void> {
    for (const field of Object.keys(ledger)) {
      if (!field.startsWith('lease:')) continue;
      const alive = await this.ctx.redis.exists(this.ctx.keys.proxyAlive(field.slice('lease:'.length)));
      if (alive === 0) {
        await this.ctx.redis.hdel(ledgerKey, field);
        this.deadLeases.inc();
      }
    }
  }

  async close(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    await this.queue.close();
  }
}
