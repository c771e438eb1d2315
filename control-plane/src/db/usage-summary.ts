import type { Fragment } from 'postgres';
import type { Queryable } from './connect.js';
import { attributionConditions } from './attribution-filter.js';
import { dollars, type UsageFilter } from './usage.js';

/**
 * Sums of usage records per group (GET /v1/usage/summary), computed by Postgres: one pass over the
 * rows the filters select, through the same index as the lists ((project_id, ts, id) for one or a
 * few projects) and only the monthly partitions the time range touches. The groups and the totals
 * come from the one statement (grouping sets), so they always agree.
 */
export type SummaryGroup = 'project' | 'model' | 'provider' | 'key' | 'endpoint';

export const SUMMARY_GROUPS: readonly SummaryGroup[] = ['project', 'model', 'provider', 'key', 'endpoint'];

/**
 * What the summary (not the series) can also group by: the end user, or one tag's value
 * (`tag:team`). Records without it form the group whose name is null, so the groups still add up
 * to the totals.
 */
export type AttributionGroup = 'end_user' | `tag:${string}`;
export type SummaryGrouping = SummaryGroup | AttributionGroup;

/** The key a group's name is under in `data`: the group itself, `tag` for any tag. */
export function groupKey(groupBy: SummaryGrouping): SummaryGroup | 'end_user' | 'tag' {
  return groupBy.startsWith('tag:') ? 'tag' : (groupBy as SummaryGroup | 'end_user');
}

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
  groupBy: SummaryGrouping;
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
  data: (SummaryFigures & Partial<Record<SummaryGroup, string>> & { end_user?: string | null; tag?: string | null })[];
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
  conditions.push(...attributionConditions(sql, filter));
  const where = conditions.length === 0 ? sql`` : sql`where ${conditions.reduce((all, c) => sql`${all} and ${c}`)}`;
  const groupBy = query.groupBy;
  if (groupBy === 'end_user' || groupBy.startsWith('tag:')) return attributionSummaryQuery(sql, groupBy as AttributionGroup, where);
  const column = sql(GROUP_COLUMNS[groupBy as SummaryGroup]);
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

/**
 * The same sums per end user or per value of one tag. The group is computed once in a subquery
 * (the tag key is a parameter there, and GROUPING() needs one expression to name), and the
 * records without it form the null group.
 */
function attributionSummaryQuery(sql: Queryable, groupBy: AttributionGroup, where: Fragment): Fragment {
  const group = groupBy === 'end_user' ? sql`end_user` : sql`tags ->> ${groupBy.slice('tag:'.length)}`;
  return sql`
    select grp, grouping(grp) = 1 as is_total, count(*)::int8 as requests,
           coalesce(sum(input_tokens), 0)::int8 as input, coalesce(sum(output_tokens), 0)::int8 as output,
           coalesce(sum(total_tokens), 0)::int8 as total, coalesce(sum(cached_tokens), 0)::int8 as cached,
           sum(cost_usd)::text as cost
    from (select ${group} as grp, input_tokens, output_tokens, total_tokens, cached_tokens, cost_usd from usage_records ${where}) r
    group by grouping sets ((grp), ())
    order by is_total, total desc, grp nulls last`;
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
    else data.push({ [groupKey(query.groupBy)]: row.grp, ...figures(row) });
  }
  return { data, totals };
}

export function emptyFigures(): SummaryFigures {
  return { requests: 0, tokens: { input: 0, output: 0, total: 0, cached: 0 }, cost_usd: null };
}
