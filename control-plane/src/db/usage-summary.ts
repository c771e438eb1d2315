import type { Fragment } from 'postgres';
import type { Queryable } from './connect.js';
import { dollars, type UsageFilter } from './usage.js';

/**
 * Sums of usage records per group (GET /v1/usage/summary), computed by Postgres: one pass over the
 * rows the filters select, through the same index as the lists ((project_id, ts, id) for one or a
 * few projects) and only the monthly partitions the time range touches. The groups and the totals
 * come from the one statement (grouping sets), so they always agree.
 */
export type SummaryGroup = 'project' | 'model' | 'provider' | 'key' | 'endpoint';

export const SUMMARY_GROUPS: readonly SummaryGroup[] = ['project', 'model', 'provider', 'key', 'endpoint'];

/** Fixed column names, never input. */
const GROUP_COLUMNS: Record<SummaryGroup, string> = {
  project: 'project_id',
  model: 'model',
  provider: 'provider',
  key: 'key_id',
  endpoint: 'endpoint',
};

export interface SummaryQuery {
  /** null: every project (account admins); else these projects only. */
  projectIds: readonly string[] | null;
  groupBy: SummaryGroup;
  /** Unix ms, inclusive. */
  from: number | undefined;
  /** Unix ms, exclusive. */
  to: number | undefined;
}

export interface SummaryFigures {
  requests: number;
  tokens: { input: number; output: number; total: number; cached: number };
  /** null when no record counted here has a cost. */
  cost_usd: number | null;
}

export interface UsageSummary {
  /** Busiest group (most total tokens) first; each entry is keyed by the group name. */
  data: (SummaryFigures & Partial<Record<SummaryGroup, string>>)[];
  totals: SummaryFigures;
}

interface SummaryRow {
  grp: string | null;
  is_total: boolean;
  requests: bigint;
  input: bigint;
  output: bigint;
  total: bigint;
  cached: bigint;
  cost: string | null;
}

/** The statement behind GET /v1/usage/summary, unexecuted, so a test can EXPLAIN exactly what runs. */
export function usageSummaryQuery(sql: Queryable, query: SummaryQuery, filter: UsageFilter): Fragment {
  const conditions: Fragment[] = [];
  const ids = query.projectIds;
  if (ids !== null) conditions.push(ids.length === 1 ? sql`project_id = ${ids[0] ?? null}` : sql`project_id = any(${sql.array(ids as string[])}::uuid[])`);
  if (query.from !== undefined) conditions.push(sql`ts >= ${query.from}`);
  if (query.to !== undefined) conditions.push(sql`ts < ${query.to}`);
  if (filter.keyId !== undefined) conditions.push(sql`key_id = ${filter.keyId}`);
  if (filter.model !== undefined) conditions.push(sql`model = ${filter.model}`);
  if (filter.provider !== undefined) conditions.push(sql`provider = ${filter.provider}`);
  if (filter.finishReason !== undefined) conditions.push(sql`finish_reason = ${filter.finishReason}`);
  if (filter.endpoint !== undefined) conditions.push(sql`endpoint = ${filter.endpoint}`);
  const where = conditions.length === 0 ? sql`` : sql`where ${conditions.reduce((all, c) => sql`${all} and ${c}`)}`;
  const column = sql(GROUP_COLUMNS[query.groupBy]);
  // sum() skips nulls and is null over none: a group's cost is null only when none of its records has one.
  return sql`
    select ${column}::text as grp, grouping(${column}) = 1 as is_total, count(*)::int8 as requests,
           coalesce(sum(input_tokens), 0)::int8 as input, coalesce(sum(output_tokens), 0)::int8 as output,
           coalesce(sum(total_tokens), 0)::int8 as total, coalesce(sum(cached_tokens), 0)::int8 as cached,
           sum(cost_usd)::text as cost
    from usage_records ${where}
    group by grouping sets ((${column}), ())
    order by is_total, total desc, grp`;
}

function figures(row: SummaryRow): SummaryFigures {
  return {
    requests: Number(row.requests),
    tokens: { input: Number(row.input), output: Number(row.output), total: Number(row.total), cached: Number(row.cached) },
    cost_usd: dollars(row.cost),
  };
}

export async function summariseUsage(sql: Queryable, query: SummaryQuery, filter: UsageFilter): Promise<UsageSummary> {
  const rows = (await usageSummaryQuery(sql, query, filter)) as unknown as SummaryRow[];
  const data: UsageSummary['data'] = [];
  let totals: SummaryFigures = emptyFigures();
  for (const row of rows) {
    if (row.is_total) totals = figures(row);
    else data.push({ [query.groupBy]: row.grp as string, ...figures(row) });
  }
  return { data, totals };
}

export function emptyFigures(): SummaryFigures {
  return { requests: 0, tokens: { input: 0, output: 0, total: 0, cached: 0 }, cost_usd: null };
}
