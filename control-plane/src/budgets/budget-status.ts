import { budgetWindow, type Budget } from '@gateway/shared';
import type { AppContext } from '../context.js';
import { spentInWindow, type BudgetRow } from '../db/budgets.js';

/** Nano-dollars per dollar: the ledgers count in integers, so sums are exact. */
export const NANOS = 1_000_000_000;

/**
 * A budget as the API answers it: the definition, and where its current period stands. Spend and
 * reservations come from the ledger the proxies enforce with (what they will refuse at); when Redis
 * has no ledger (no request yet this period, or Redis away or restarted) spend is what PostgreSQL's
 * usage records say and nothing is reserved.
 */
export async function budgetStatus(ctx: Pick<AppContext, 'sql' | 'redis' | 'keys'>, row: BudgetRow, now = Date.now()): Promise<Budget> {
  const window = budgetWindow({ period: row.period, timezone: row.timezone, created_at: row.created_at.getTime() }, now);
  let spent: number | null = null;
  let reserved = 0;
  if (ctx.redis.status === 'ready') {
    try {
      const ledger = await ctx.redis.hgetall(ctx.keys.budgetLedger(row.project_id, row.id, window.id));
      if (ledger.spent !== undefined) {
        spent = Number(ledger.spent) / NANOS;
        for (const [field, value] of Object.entries(ledger)) {
          if (!field.startsWith('lease:')) continue;
          const expires = Number(ledger[`exp:${field.slice(6)}`] ?? 0);
          if (expires > now) reserved += Number(value);
        }
        reserved /= NANOS;
      }
    } catch {
      // Redis away: PostgreSQL's settled spend is the best answer there is.
    }
  }
  spent ??= await spentInWindow(ctx.sql, row, window.start, window.end);
  return {
    id: row.id,
    project_id: row.project_id,
    scope: row.scope,
    key_id: row.key_id,
    tag: row.tag,
    limit_usd: row.limit_usd,
    period: row.period,
    timezone: row.timezone,
    alert_at: row.alert_at,
    spent_usd: round(spent),
    reserved_usd: round(reserved),
    period_start: new Date(window.start).toISOString(),
    resets_at: window.end === null ? null : new Date(window.end).toISOString(),
    created_at: row.created_at.toISOString(),
  };
}

function round(dollars: number): number {
  return Math.round(dollars * 1e9) / 1e9;
}
