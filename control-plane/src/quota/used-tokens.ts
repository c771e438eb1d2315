import { quotaPeriodId, quotaPeriodRange } from '@gateway/shared';
import type { AppContext } from '../context.js';
import type { Project } from '../db/projects.js';

/**
 * `used_tokens` as the proxies count it. For a project with a quota that is the `charged` field of
 * its quota ledger in Redis for the current period: the counter the quota is enforced with, so
 * what the dashboard shows is what the proxies will refuse at. Without a quota, or when Redis has
 * no ledger yet, it is what the writer has settled in Postgres.
 */
export async function withUsedTokens<T extends Project | Project[]>(ctx: Pick<AppContext, 'redis' | 'keys' | 'sql'>, input: T): Promise<T> {
  const projects = Array.isArray(input) ? input : [input];
  const limited = projects.filter((p) => p.quota_tokens !== null);
  if (limited.length === 0) return input;
  const now = Date.now();
  const periods = limited.map((p) => quotaPeriodId(p.quota_period, now));
  let charged: (string | null)[] = limited.map(() => null);
  if (ctx.redis.status === 'ready') {
    try {
      // One HGET each, sent together: the ledgers of several projects may sit on several nodes
      // of a cluster, where one transaction could not name them all.
      charged = await Promise.all(limited.map((p, i) => ctx.redis.hget(ctx.keys.quotaLedger(p.id, periods[i]!), 'charged').catch(() => null)));
    } catch {
      // Redis away: Postgres's settled count is the best answer there is.
    }
  }
  for (const [i, project] of limited.entries()) {
    const value = charged[i];
    if (value !== null && value !== undefined) project.used_tokens = Number(value);
    else if (periods[i] !== 'total') project.used_tokens = await settledInPeriod(ctx, project.id, periods[i]!);
  }
  return input;
}

/** Tokens of the project's usage records in one period, from Postgres. */
export async function settledInPeriod(ctx: Pick<AppContext, 'sql'>, projectId: string, periodId: string): Promise<number> {
  if (periodId === 'total') {
    const rows = await ctx.sql<{ used: bigint }[]>`select used_tokens as used from projects where id = ${projectId}`;
    return Number(rows[0]?.used ?? 0);
  }
  const { from, to } = quotaPeriodRange(periodId);
  const rows = await ctx.sql<{ used: bigint | null }[]>`
    select sum(total_tokens)::bigint as used from usage_records where project_id = ${projectId} and ts >= ${from} and ts < ${to}`;
  return Number(rows[0]?.used ?? 0);
}
