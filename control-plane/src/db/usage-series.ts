import type { Fragment } from 'postgres';
import type { Queryable } from './connect.js';
import { attributionConditions } from './attribution-filter.js';
import { dollars, type UsageFilter } from './usage.js';
import type { SummaryFigures, SummaryGroup } from './usage-summary.js';

/**
 * Usage over time (GET /v1/usage/series): the sums of GET /v1/usage/summary per time bucket and
 * group, computed by PostgreSQL in one pass over the range, so a chart covers every record of a
 * month of heavy traffic without the browser reading them. Buckets are `bucket_ms` wide and start
 * at multiples of it shifted by `offset_ms` (a client's UTC offset, so day buckets start at its
 * midnight); only buckets with records are returned.
 */
const GROUP_COLUMNS: Record<SummaryGroup, string> = {
  project: 'project_id',
  model: 'model',
  provider: 'provider',
  key: 'key_id',
  endpoint: 'endpoint',
};

export interface SeriesQuery {
  projectIds: readonly string[] | null;
  groupBy: SummaryGroup;
  from: number;
  to: number;
  bucketMs: number;
  offsetMs: number;
}

export type SeriesPoint = SummaryFigures & { start: number } & Partial<Record<SummaryGroup, string>>;

interface SeriesRow {
  start: bigint;
  grp: string;
  requests: bigint;
  input: bigint;
  output: bigint;
  total: bigint;
  cached: bigint;
  cost: string | null;
}

/** The statement, unexecuted, so a test can EXPLAIN what runs. */
export function usageSeriesQuery(sql: Queryable, query: SeriesQuery, filter: UsageFilter): Fragment {
  const conditions: Fragment[] = [sql`ts >= ${query.from}`, sql`ts < ${query.to}`];
  const ids = query.projectIds;
  if (ids !== null) conditions.push(ids.length === 1 ? sql`project_id = ${ids[0] ?? null}` : sql`project_id = any(${sql.array(ids as string[])}::uuid[])`);
  if (filter.keyId !== undefined) conditions.push(sql`key_id = ${filter.keyId}`);
  if (filter.model !== undefined) conditions.push(sql`model = ${filter.model}`);
  if (filter.provider !== undefined) conditions.push(sql`provider = ${filter.provider}`);
  if (filter.finishReason !== undefined) conditions.push(sql`finish_reason = ${filter.finishReason}`);
  if (filter.endpoint !== undefined) conditions.push(sql`endpoint = ${filter.endpoint}`);
  conditions.push(...attributionConditions(sql, filter));
  const column = sql(GROUP_COLUMNS[query.groupBy]);
  // floor(), not integer division: ts + offset is negative for a bucket before the epoch's offset.
  const start = sql`(floor((ts + ${query.offsetMs})::numeric / ${query.bucketMs}) * ${query.bucketMs} - ${query.offsetMs})::int8`;
  return sql`
    select ${start} as start, ${column}::text as grp, count(*)::int8 as requests,
           sum(input_tokens)::int8 as input, sum(output_tokens)::int8 as output,
           sum(total_tokens)::int8 as total, sum(cached_tokens)::int8 as cached, sum(cost_usd)::text as cost
    from usage_records where ${conditions.reduce((all, c) => sql`${all} and ${c}`)}
    group by 1, 2
    order by 1, 2`;
}

export async function usageSeries(sql: Queryable, query: SeriesQuery, filter: UsageFilter): Promise<SeriesPoint[]> {
  const rows = (await usageSeriesQuery(sql, query, filter)) as unknown as SeriesRow[];
  return rows.map((row) => ({
    start: Number(row.start),
    [query.groupBy]: row.grp,
    requests: Number(row.requests),
    tokens: { input: Number(row.input), output: Number(row.output), total: Number(row.total), cached: Number(row.cached) },
    cost_usd: dollars(row.cost),
  }));
}
