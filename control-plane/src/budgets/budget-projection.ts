import { budgetWindow, encodeProjectBudgets } from '@gateway/shared';
import type { FastifyBaseLogger } from 'fastify';
import type { AppContext } from '../context.js';
import { listBudgets, ruleOf, spentInWindow, type BudgetRow } from '../db/budgets.js';
import { REDIS_BOUND_MS } from '../keys/projection.js';
import { NANOS } from './budget-status.js';

type Ctx = Pick<AppContext, 'sql' | 'redis' | 'keys' | 'projection'>;

/**
 * A project's budgets, as the proxies read them: RedisKeys.projectBudgets beside its policy,
 * written and then announced with the same project.updated message a policy change sends (the
 * proxies re-read both in one MGET and hand back their dollar leases). Each budget's ledger for
 * the current period is started first from PostgreSQL's usage records, if Redis has none, so no
 * proxy starts it at 0. Like a policy change, a committed change Redis does not take in time
 * reaches the proxies with the keeper's next load (budget-keeper.ts), which follows every reconnect.
 */
export async function projectBudgets(ctx: Ctx, projectId: string): Promise<boolean> {
  const rows = await listBudgets(ctx.sql, projectId);
  if (!ctx.projection.reachable) return false;
  const write = async () => {
    await Promise.all(rows.map((row) => startLedger(ctx, row)));
    await ctx.redis.set(ctx.keys.projectBudgets(projectId), encodeProjectBudgets(projectId, rows.map(ruleOf)));
    await ctx.projection.projectUpdated(projectId);
    return true;
  };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), REDIS_BOUND_MS * 10);
  });
  return Promise.race([write().catch(() => false), timeout]).finally(() => clearTimeout(timer));
}

/** The current period's ledger, with the spend PostgreSQL knows, unless Redis has it already. */
export async function startLedger(ctx: Pick<AppContext, 'sql' | 'redis' | 'keys'>, row: BudgetRow, now = Date.now()): Promise<void> {
  const window = budgetWindow({ period: row.period, timezone: row.timezone, created_at: row.created_at.getTime() }, now);
  const key = ctx.keys.budgetLedger(row.project_id, row.id, window.id);
  if ((await ctx.redis.hexists(key, 'spent')) === 1) return;
  const spent = await spentInWindow(ctx.sql, row, window.start, window.end);
  await ctx.redis.hsetnx(key, 'spent', Math.ceil(spent * NANOS));
  if (window.end !== null) await ctx.redis.pexpireat(key, window.end + LEDGER_GRACE_MS);
}

/** How long a period's ledger outlives the period: its last requests settle, reports read it. */
export const LEDGER_GRACE_MS = 2 * 24 * 3600 * 1000;

/** The budget's definition changed what it counts: its current ledger goes (leases with it). */
export async function resetLedger(ctx: Pick<AppContext, 'redis' | 'keys'>, row: BudgetRow, now = Date.now()): Promise<void> {
  const window = budgetWindow({ period: row.period, timezone: row.timezone, created_at: row.created_at.getTime() }, now);
  await ctx.redis.del(ctx.keys.budgetLedger(row.project_id, row.id, window.id));
}

export function budgetProjectionFailed(log: FastifyBaseLogger, projectId: string): void {
  log.warn({ project_id: projectId }, 'budgets changed while Redis is unreachable; the change reaches the proxies once it is back');
}
