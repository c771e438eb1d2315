import type { ApiKey, Member, NewApiKey, Project, StoredAuditEvent as AuditEvent, StoredUsageRecord as UsageRecord, SummaryFigures, User } from '@gateway/shared';
import { describeMcp } from './mcp-option.js';
import type { Column } from './output.js';

/** What the table and CSV formats show of each resource; JSON shows the API's answer whole. */
export const PROJECT_COLUMNS: Column<Project>[] = [
  { field: 'id', get: (p) => p.id },
  { field: 'name', get: (p) => p.name },
  { field: 'quota_tokens', title: 'QUOTA', kind: 'number', get: (p) => p.quota_tokens },
  { field: 'quota_period', title: 'PERIOD', get: (p) => p.quota_period },
  { field: 'used_tokens', title: 'USED', kind: 'number', get: (p) => p.used_tokens },
  { field: 'rate_limits.key_rpm', title: 'KEY RPM', kind: 'number', get: (p) => p.rate_limits.key_rpm },
  { field: 'rate_limits.key_tpm', title: 'KEY TPM', kind: 'number', get: (p) => p.rate_limits.key_tpm },
  { field: 'rate_limits.project_rpm', title: 'PROJECT RPM', kind: 'number', get: (p) => p.rate_limits.project_rpm },
  { field: 'rate_limits.project_tpm', title: 'PROJECT TPM', kind: 'number', get: (p) => p.rate_limits.project_tpm },
  { field: 'allowed_models', title: 'MODELS', kind: 'list', blank: '(any)', get: (p) => p.allowed_models },
  { field: 'max_tokens_cap', title: 'MAX TOKENS', kind: 'number', get: (p) => p.max_tokens_cap },
  { field: 'mcp', title: 'MCP', kind: 'list', blank: '(none)', get: (p) => describeMcp(p.mcp) },
  { field: 'cache', title: 'CACHE', get: (p) => (p.cache.mode === 'off' ? 'off' : `${p.cache.mode} ${p.cache.ttl_seconds}s`) },
  { field: 'created_at', title: 'CREATED', kind: 'instant', get: (p) => p.created_at },
];

export const KEY_COLUMNS: Column<ApiKey>[] = [
  { field: 'id', get: (k) => k.id },
  { field: 'project_id', get: (k) => k.project_id, csvOnly: true },
  { field: 'name', get: (k) => k.name },
  { field: 'prefix', get: (k) => k.prefix },
  { field: 'created_by', get: (k) => k.created_by, csvOnly: true },
  { field: 'created_at', title: 'CREATED', kind: 'instant', get: (k) => k.created_at },
  { field: 'expires_at', title: 'EXPIRES', kind: 'instant', get: (k) => k.expires_at },
  { field: 'last_used_at', title: 'LAST USED', kind: 'instant', get: (k) => k.last_used_at },
];

export const NEW_KEY_COLUMNS: Column<NewApiKey>[] = [
  { field: 'id', get: (k) => k.id },
  { field: 'project_id', get: (k) => k.project_id },
  { field: 'name', get: (k) => k.name },
  { field: 'prefix', get: (k) => k.prefix },
  { field: 'key', get: (k) => k.key },
  { field: 'created_at', kind: 'instant', get: (k) => k.created_at },
  { field: 'expires_at', kind: 'instant', get: (k) => k.expires_at },
];

export const MEMBER_COLUMNS: Column<Member>[] = [
  { field: 'project_id', get: (m) => m.project_id, csvOnly: true },
  { field: 'user_id', get: (m) => m.user_id },
  { field: 'email', get: (m) => m.email },
  { field: 'role', get: (m) => m.role },
  { field: 'created_at', title: 'SINCE', kind: 'instant', get: (m) => m.created_at },
];

export const USER_COLUMNS: Column<User>[] = [
  { field: 'id', get: (u) => u.id },
  { field: 'email', get: (u) => u.email },
  { field: 'role', get: (u) => u.role },
  { field: 'disabled', kind: 'flag', get: (u) => u.disabled },
  { field: 'created_at', title: 'CREATED', kind: 'instant', get: (u) => u.created_at },
];

export const USAGE_COLUMNS: Column<UsageRecord>[] = [
  { field: 'id', get: (r) => r.id, csvOnly: true },
  { field: 'request_id', get: (r) => r.request_id, csvOnly: true },
  { field: 'timestamp', title: 'TIME (UTC)', kind: 'instant', get: (r) => r.timestamp },
  { field: 'project_id', title: 'PROJECT', get: (r) => r.project_id },
  { field: 'key_id', get: (r) => r.key_id, csvOnly: true },
  { field: 'model', get: (r) => r.model },
  { field: 'provider', get: (r) => r.provider },
  { field: 'endpoint', get: (r) => r.endpoint },
  { field: 'tokens.input', title: 'IN', kind: 'number', get: (r) => r.tokens.input },
  { field: 'tokens.output', title: 'OUT', kind: 'number', get: (r) => r.tokens.output },
  { field: 'tokens.cached', title: 'CACHED', kind: 'number', get: (r) => r.tokens.cached },
  { field: 'tokens.total', title: 'TOTAL', kind: 'number', get: (r) => r.tokens.total },
  { field: 'cost_usd', title: 'COST USD', kind: 'cost', get: (r) => r.cost_usd },
  { field: 'latency_ms', title: 'MS', kind: 'number', get: (r) => r.latency_ms },
  { field: 'finish_reason', title: 'FINISH', get: (r) => r.finish_reason },
  { field: 'provider_finish_reason', get: (r) => r.provider_finish_reason, csvOnly: true },
  { field: 'stream', kind: 'flag', get: (r) => r.stream },
  { field: 'tags', get: (r) => Object.entries(r.tags).map(([k, v]) => `${k}=${v}`).join(',') || null, csvOnly: true },
  { field: 'end_user', get: (r) => r.end_user, csvOnly: true },
];

export const AUDIT_COLUMNS: Column<AuditEvent>[] = [
  { field: 'id', get: (e) => e.id, csvOnly: true },
  { field: 'request_id', get: (e) => e.request_id, csvOnly: true },
  { field: 'timestamp', title: 'TIME (UTC)', kind: 'instant', get: (e) => e.timestamp },
  { field: 'type', get: (e) => e.type },
  { field: 'outcome', get: (e) => e.outcome },
  { field: 'status', kind: 'number', get: (e) => e.status },
  { field: 'error_code', title: 'ERROR', get: (e) => e.error_code },
  { field: 'project_id', title: 'PROJECT', get: (e) => e.project_id },
  { field: 'key_id', get: (e) => e.key_id, csvOnly: true },
  { field: 'actor', get: (e) => e.actor },
  { field: 'target.type', title: 'TARGET', get: (e) => e.target?.type },
  { field: 'target.id', get: (e) => e.target?.id, csvOnly: true },
  { field: 'model', get: (e) => e.model },
  { field: 'provider', get: (e) => e.provider },
  { field: 'endpoint', get: (e) => e.endpoint, csvOnly: true },
  { field: 'attempts', get: (e) => e.attempts, csvOnly: true },
  { field: 'providers', kind: 'list', get: (e) => e.providers, csvOnly: true },
  { field: 'client_ip', title: 'CLIENT', get: (e) => e.client_ip },
  { field: 'user_agent', get: (e) => e.user_agent, csvOnly: true },
  { field: 'latency_ms', get: (e) => e.latency_ms, csvOnly: true },
];

/** The sums of GET /v1/usage/summary, after the column that names the group. */
export function summaryColumns(group: string): Column<SummaryFigures & Record<string, unknown>>[] {
  return [
    { field: group, get: (s) => s[group] },
    { field: 'requests', kind: 'number', get: (s) => s.requests },
    { field: 'tokens.input', title: 'IN', kind: 'number', get: (s) => s.tokens.input },
    { field: 'tokens.output', title: 'OUT', kind: 'number', get: (s) => s.tokens.output },
    { field: 'tokens.cached', title: 'CACHED', kind: 'number', get: (s) => s.tokens.cached },
    { field: 'tokens.total', title: 'TOTAL', kind: 'number', get: (s) => s.tokens.total },
    { field: 'cost_usd', title: 'COST USD', kind: 'cost', get: (s) => s.cost_usd },
  ];
}
