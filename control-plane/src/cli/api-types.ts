/** The management API's answers, as far as gatewayctl reads them (GET /openapi.json has them all). */
export interface Project {
  id: string;
  name: string;
  quota_tokens: number | null;
  quota_period: 'total' | 'month';
  used_tokens: number;
  rate_limits: { key_rpm: number | null; key_tpm: number | null; project_rpm: number | null; project_tpm: number | null };
  allowed_models: string[] | null;
  max_tokens_cap: number | null;
  mcp?: { servers: Record<string, { tools: '*' | string[] }> } | null;
  created_at: string;
}

export interface ApiKey {
  id: string;
  project_id: string;
  name: string;
  prefix: string;
  created_by: string | null;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
}

export interface NewApiKey {
  id: string;
  project_id: string;
  name: string;
  prefix: string;
  key: string;
  created_at: string;
  expires_at: string | null;
}

export interface Member {
  project_id: string;
  user_id: string;
  email: string;
  role: string;
  created_at: string;
}

export interface User {
  id: string;
  email: string;
  role: string;
  disabled: boolean;
  created_at: string;
}

export interface Tokens {
  input: number;
  output: number;
  total: number;
  cached: number;
}

export interface UsageRecord {
  id: string;
  request_id: string;
  project_id: string;
  key_id: string;
  timestamp: number;
  model: string;
  provider: string;
  tokens: Tokens;
  cost_usd: number | null;
  latency_ms: number;
  finish_reason: string;
  provider_finish_reason: string | null;
  stream: boolean;
  endpoint: string;
}

export interface AuditEvent {
  id: string;
  request_id: string;
  timestamp: number;
  type: string;
  outcome: string;
  status: number;
  error_code: string | null;
  project_id: string | null;
  key_id: string | null;
  actor: string | null;
  model: string | null;
  provider: string | null;
  endpoint: string | null;
  attempts: number;
  providers: string[];
  client_ip: string | null;
  user_agent: string | null;
  latency_ms: number;
}

export interface List<T> {
  data: T[];
}

export interface Page<T> extends List<T> {
  next_cursor: string | null;
  has_more: boolean;
}

export interface SummaryFigures {
  requests: number;
  tokens: Tokens;
  cost_usd: number | null;
}

export type SummaryEntry = SummaryFigures & Record<string, unknown>;

export interface UsageSummary {
  data: SummaryEntry[];
  totals: SummaryFigures;
}
