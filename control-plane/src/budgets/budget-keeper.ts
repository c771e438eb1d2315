import { randomUUID } from 'node:crypto';
import { budgetWindow, encodeProjectBudgets } from '@gateway/shared';
import { Gauge } from 'prom-client';
import type { AppContext } from '../context.js';
import { listAllBudgets, ruleOf, type BudgetRow } from '../db/budgets.js';
import { recordEvent } from '../webhooks/event-outbox.js';
import { newEventId } from '../webhooks/signing.js';
import { startLedger } from './budget-projection.js';
import { NANOS } from './budget-status.js';

/** How often the keeper looks: a Redis that restarted empty is reloaded within about this long. */
export const BUDGET_KEEPER_MS = 1_000;
/** Thresholds are looked for every this many runs. */
const THRESHOLD_EVERY = 3;

/**
 * Keeps the budget ledgers in Redis true to PostgreSQL, and announces their thresholds:
 * - while RedisKeys.budgetLedgersReady is missing (a Redis that restarted empty), every budget's
 *   current ledger is started from the usage records' cost_usd, the budgets are projected again,
 *   and the marker set; until then no proxy starts a ledger at 0 (they serve from their bounded
 *   outage allowance, docs/budgets.md);
 * - each `alert_at` fraction a budget's spend reached in its period becomes one `budget.threshold`
 *   event: the budget_thresholds row's primary key makes it once per budget, period and fraction,
 *   whichever control plane got there;
 * - spend and limit per budget are gauges (`gateway_budget_spent_usd`, `gateway_budget_limit_usd`).
 * One control plane runs it at a time (a Redis lock).
 */
export class BudgetKeeper {
  private readonly owner = randomUUID();
  private timer: NodeJS.Timeout | undefined;
  private runs = 0;
  private readonly spentGauge: Gauge;
  private readonly limitGauge: Gauge;

  constructor(private readonly ctx: Pick<AppContext, 'sql' | 'redis' | 'keys' | 'log' | 'metrics' | 'webhooks'>) {
    const labelNames = ['project_id', 'budget_id', 'scope'] as const;
    this.spentGauge = new Gauge({ name: 'gateway_budget_spent_usd', help: "Settled spend in the budget's current period, US dollars", labelNames, registers: [ctx.metrics] });
    this.limitGauge = new Gauge({ name: 'gateway_budget_limit_usd', help: "The budget's limit per period, US dollars", labelNames, registers: [ctx.metrics] });
  }

  start(): void {
    this.timer = setInterval(() => {
      this.run().catch((err: Error) => this.ctx.log.warn({ err: { message: err.message } }, 'budget keeper failed'));
    }, BUDGET_KEEPER_MS);
    this.timer.unref();
  }

  /** One pass; false when another control plane holds the lock. */
  async run(now = Date.now(), thresholds = this.runs++ % THRESHOLD_EVERY === 0): Promise<boolean> {
    const { redis, keys } = this.ctx;
    const locked = await redis.set(keys.budgetKeeperLock, this.owner, 'PX', 30_000, 'NX');
    if (locked === null) return false;
    try {
      const loaded = (await redis.exists(keys.budgetLedgersReady)) === 1;
      if (loaded && !thresholds) return true;
      const byProject = await listAllBudgets(this.ctx.sql);
      if (!loaded) await this.load(byProject, now);
      if (thresholds) await this.announce(byProject, now);
      return true;
    } finally {
      if ((await redis.get(keys.budgetKeeperLock)) === this.owner) await redis.del(keys.budgetKeeperLock);
    }
  }

  private async load(byProject: Map<string, BudgetRow[]>, now: number): Promise<void> {
    const { redis, keys } = this.ctx;
    for (const [projectId, rows] of byProject) {
      for (const row of rows) await startLedger(this.ctx, row, now);
      // Proxies hold the budgets they read before; a Redis that lost them gets them back unannounced.
      await redis.set(keys.projectBudgets(projectId), encodeProjectBudgets(projectId, rows.map(ruleOf)));
    }
    await redis.set(keys.budgetLedgersReady, String(now));
    if (byProject.size > 0) this.ctx.log.info({ projects: byProject.size }, 'budget ledgers loaded into Redis from the usage records');
  }

  private async announce(byProject: Map<string, BudgetRow[]>, now: number): Promise<void> {
    this.spentGauge.reset();
    this.limitGauge.reset();
    for (const rows of byProject.values()) {
      for (const row of rows) {
        const window = budgetWindow({ period: row.period, timezone: row.timezone, created_at: row.created_at.getTime() }, now);
        const raw = await this.ctx.redis.hget(this.ctx.keys.budgetLedger(row.project_id, row.id, window.id), 'spent');
        const spent = raw === null ? 0 : Number(raw) / NANOS;
        const labels = { project_id: row.project_id, budget_id: row.id, scope: row.scope };
        this.spentGauge.set(labels, spent);
        this.limitGauge.set(labels, row.limit_usd);
        for (const fraction of row.alert_at) {
          if (spent + 1e-12 < fraction * row.limit_usd) continue;
          await this.crossed(row, window, fraction, spent);
        }
      }
    }
  }

  /** The crossing's row and its event commit together; a second look finds the row and does nothing. */
  private async crossed(row: BudgetRow, window: { id: string; start: number; end: number | null }, fraction: number, spent: number): Promise<void> {
    const recorded = await this.ctx.sql.begin(async (tx) => {
      const id = newEventId();
      const inserted = await tx`
        insert into budget_thresholds (budget_id, project_id, period_id, fraction, limit_usd, spent_usd, period_start, event_id)
        values (${row.id}, ${row.project_id}, ${window.id}, ${fraction}, ${row.limit_usd}, ${spent}, ${new Date(window.start)}, ${id})
        on conflict do nothing returning budget_id`;
      if (inserted.length === 0) return null;
      return recordEvent(tx, {
        id,
        projectId: row.project_id,
        type: 'budget.threshold',
        data: {
          project_id: row.project_id,
          budget_id: row.id,
          scope: row.scope,
          key_id: row.key_id,
          tag: row.tag,
          threshold: fraction,
          limit_usd: row.limit_usd,
          spent_usd: Math.round(spent * 1e9) / 1e9,
          period: row.period,
          period_start: new Date(window.start).toISOString(),
          resets_at: window.end === null ? null : new Date(window.end).toISOString(),
        },
      });
    });
    if (recorded !== null) await this.ctx.webhooks.deliver(recorded.projectId, recorded.deliveryIds);
  }

  close(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
  }
}
