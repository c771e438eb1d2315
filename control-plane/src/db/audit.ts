import type { Fragment } from 'postgres';
import type { AuditOutcome, AuditTarget, GatewayEndpoint, StoredAuditEvent } from '@gateway/shared';
import type { Queryable } from './connect.js';
import { attributionConditions, type AttributionFilter } from './attribution-filter.js';
import { pageQuery, type PageQuery } from './record-page.js';

/** Audit events as stored (ts in ms) and as the API shows them (DESIGN §4). */
export interface AuditFilter extends AttributionFilter {
  keyId?: string | undefined;
  model?: string | undefined;
  provider?: string | undefined;
  outcome?: AuditOutcome | undefined;
  type?: string | undefined;
  endpoint?: GatewayEndpoint | undefined;
  batchId?: string | undefined;
}

interface AuditRow {
  ts: bigint;
  id: string;
  request_id: string;
  type: string;
  outcome: AuditOutcome;
  status: number;
  error_code: string | null;
  project_id: string | null;
  key_id: string | null;
  actor: string | null;
  target_type: AuditTarget['type'] | null;
  target_id: string | null;
  model: string | null;
  provider: string | null;
  endpoint: GatewayEndpoint | null;
  attempts: number;
  providers: string[];
  client_ip: string | null;
  user_agent: string | null;
  latency_ms: number;
  mcp: StoredAuditEvent['mcp'];
  count: number;
  skipped: string[];
  tags: StoredAuditEvent['tags'];
  end_user: string | null;
  cache: StoredAuditEvent['cache'];
  guardrails: StoredAuditEvent['guardrails'];
  batch_id: string | null;
}

const COLUMNS =
  'ts, id, request_id, type, outcome, status, error_code, project_id, key_id, actor, target_type, target_id, model, provider, endpoint, attempts, providers, client_ip, user_agent, latency_ms, mcp, count, skipped, tags, end_user, cache, guardrails, batch_id';

function toAuditEvent(row: AuditRow): StoredAuditEvent {
  return {
    id: row.id,
    request_id: row.request_id,
    timestamp: Number(row.ts),
    type: row.type,
    outcome: row.outcome,
    status: row.status,
    error_code: row.error_code,
    project_id: row.project_id,
    key_id: row.key_id,
    actor: row.actor,
    target: row.target_type === null || row.target_id === null ? null : { type: row.target_type, id: row.target_id },
    model: row.model,
    provider: row.provider,
    endpoint: row.endpoint,
    attempts: row.attempts,
    providers: row.providers,
    client_ip: row.client_ip,
    user_agent: row.user_agent,
    latency_ms: row.latency_ms,
    mcp: row.mcp,
    count: row.count,
    skipped: row.skipped,
    tags: row.tags,
    end_user: row.end_user,
    cache: row.cache,
    guardrails: row.guardrails,
    batch_id: row.batch_id,
  };
}

/** The statement behind GET /v1/audit, unexecuted, so a test can EXPLAIN exactly what runs. */
export function auditListQuery(sql: Queryable, page: PageQuery, filter: AuditFilter): Fragment {
  const extra: Fragment[] = [];
  if (filter.keyId !== undefined) extra.push(sql`key_id = ${filter.keyId}`);
  if (filter.model !== undefined) extra.push(sql`model = ${filter.model}`);
  if (filter.provider !== undefined) extra.push(sql`provider = ${filter.provider}`);
  if (filter.outcome !== undefined) extra.push(sql`outcome = ${filter.outcome}`);
  if (filter.type !== undefined) extra.push(sql`type = ${filter.type}`);
  if (filter.endpoint !== undefined) extra.push(sql`endpoint = ${filter.endpoint}`);
  if (filter.batchId !== undefined) extra.push(sql`batch_id = ${filter.batchId}`);
  extra.push(...attributionConditions(sql, filter));
  return pageQuery(sql, 'audit_events', COLUMNS, page, extra);
}

export async function listAudit(sql: Queryable, page: PageQuery, filter: AuditFilter): Promise<StoredAuditEvent[]> {
  const rows = (await auditListQuery(sql, page, filter)) as unknown as AuditRow[];
  return rows.map(toAuditEvent);
}
