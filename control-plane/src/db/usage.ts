import type { Fragment } from 'postgres';
import type { FinishReason, GatewayEndpoint, RecordTags, StoredUsageRecord } from '@gateway/shared';
import type { Queryable } from './connect.js';
import { attributionConditions, type AttributionFilter } from './attribution-filter.js';
import { pageQuery, type PageQuery } from './record-page.js';

/** Usage records as stored (flat token columns, ts in ms) and as the API shows them (DESIGN §4). */
export interface UsageFilter extends AttributionFilter {
  keyId?: string | undefined;
  model?: string | undefined;
  provider?: string | undefined;
  finishReason?: FinishReason | undefined;
  endpoint?: GatewayEndpoint | undefined;
  batchId?: string | undefined;
}

export interface UsageRow {
  ts: bigint;
  id: string;
  request_id: string;
  project_id: string;
  key_id: string;
  model: string;
  provider: string;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  cached_tokens: number;
  /** numeric arrives as text: exact, for the caller to read. */
  cost_usd: string | null;
  latency_ms: number;
  finish_reason: FinishReason;
  provider_finish_reason: string | null;
  stream: boolean;
  endpoint: GatewayEndpoint;
  cache_write_tokens: number;
  tags: RecordTags;
  end_user: string | null;
  cache_hit: boolean;
  saved_usd: string | null;
  requested_model: string | null;
  batch_id: string | null;
}

const COLUMNS =
  'ts, id, request_id, project_id, key_id, model, provider, input_tokens, output_tokens, total_tokens, cached_tokens, cost_usd, latency_ms, finish_reason, provider_finish_reason, stream, endpoint, cache_write_tokens, tags, end_user, cache_hit, saved_usd, requested_model, batch_id';

/** Dollars as JSON numbers: a double holds numeric(20, 10)'s costs to well under a millionth of a cent. */
export function dollars(value: string | null): number | null {
  return value === null ? null : Number(value);
}

function toUsageRecord(row: UsageRow): StoredUsageRecord {
  return {
    id: row.id,
    request_id: row.request_id,
    project_id: row.project_id,
    key_id: row.key_id,
    timestamp: Number(row.ts),
    model: row.model,
    provider: row.provider,
    tokens: { input: row.input_tokens, output: row.output_tokens, total: row.total_tokens, cached: row.cached_tokens, cache_write: row.cache_write_tokens },
    cost_usd: dollars(row.cost_usd),
    latency_ms: row.latency_ms,
    finish_reason: row.finish_reason,
    provider_finish_reason: row.provider_finish_reason,
    stream: row.stream,
    endpoint: row.endpoint,
    tags: row.tags,
    end_user: row.end_user,
    cache_hit: row.cache_hit,
    saved_usd: dollars(row.saved_usd),
    requested_model: row.requested_model,
    batch_id: row.batch_id,
  };
}

/** The statement behind GET /v1/usage, unexecuted, so a test can EXPLAIN exactly what runs. */
export function usageListQuery(sql: Queryable, page: PageQuery, filter: UsageFilter): Fragment {
  const extra: Fragment[] = [];
  if (filter.keyId !== undefined) extra.push(sql`key_id = ${filter.keyId}`);
  if (filter.model !== undefined) extra.push(sql`model = ${filter.model}`);
  if (filter.provider !== undefined) extra.push(sql`provider = ${filter.provider}`);
  if (filter.finishReason !== undefined) extra.push(sql`finish_reason = ${filter.finishReason}`);
  if (filter.endpoint !== undefined) extra.push(sql`endpoint = ${filter.endpoint}`);
  if (filter.batchId !== undefined) extra.push(sql`batch_id = ${filter.batchId}`);
  extra.push(...attributionConditions(sql, filter));
  return pageQuery(sql, 'usage_records', COLUMNS, page, extra);
}

export async function listUsage(sql: Queryable, page: PageQuery, filter: UsageFilter): Promise<StoredUsageRecord[]> {
  const rows = (await usageListQuery(sql, page, filter)) as unknown as UsageRow[];
  return rows.map(toUsageRecord);
}
