/**
 * The management API's shapes as the dashboard reads them (docs/management-api.md). Kept apart
 * from the server's schemas because the browser bundle must not pull in server modules; a test
 * compares the enumerations with the server's.
 */
export const FINISH_REASONS = ['stop', 'max_tokens', 'tool_calls', 'content_filter', 'error', 'cancelled', 'other'] as const;
export type FinishReason = (typeof FINISH_REASONS)[number];

export const GATEWAY_ENDPOINTS = ['chat.completions', 'messages', 'responses', 'embeddings', 'mcp'] as const;

export const AUDIT_OUTCOMES = ['success', 'auth_failed', 'policy_blocked', 'error', 'cancelled'] as const;
export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number];

/** Lowest to highest, as the role selector lists them. */
export const PROJECT_ROLES = ['viewer', 'member', 'admin', 'owner'] as const;
export type ProjectRole = (typeof PROJECT_ROLES)[number];

/** The audit types the API writes, offered as suggestions in the type filter (any other text works too). */
export const AUDIT_TYPES = [
  'gateway.request',
  'key.created',
  'key.deleted',
  'project.created',
  'project.updated',
  'project.deleted',
  'member.added',
  'member.updated',
  'member.removed',
  'user.created',
  'signin.succeeded',
  'signin.refreshed',
  'signin.failed',
  'user.updated',
  'user.disabled',
  'user.enabled',
  'password.changed',
  'password.reset',
  'signout',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.enabled',
  'webhook.disabled',
] as const;

/** The events a webhook can subscribe to, in the server's order (docs/webhooks.md#events). */
export const WEBHOOK_EVENT_TYPES = ['key.created', 'key.deleted', 'project.updated', 'quota.threshold', 'gateway.request.failed'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  /** Seconds. */
  expires_in: number;
}

export const ACCOUNT_ROLES = ['member', 'admin'] as const;
export type AccountRole = (typeof ACCOUNT_ROLES)[number];

export interface User {
  id: string;
  email: string;
  role: AccountRole;
  /** A disabled account cannot sign in; its sessions ended when it was disabled. */
  disabled?: boolean;
  created_at: string;
}

export interface Project {
  id: string;
  name: string;
  quota_tokens: number | null;
  used_tokens: number;
  /** What the quota counts: all time, or each calendar month (UTC). Absent means all time. */
  quota_period?: 'total' | 'month';
  created_at: string;
  /** Per-minute limits; null: none. Absent in answers of older servers. */
  rate_limits?: RateLimits;
  /** Models the project may use; null: every model the gateway serves. */
  allowed_models?: string[] | null;
  /** Largest max_tokens a request may ask for; null: none. */
  max_tokens_cap?: number | null;
  /** MCP servers and tools the project's keys may use; null: none. Absent in answers of older servers. */
  mcp?: McpSetting | null;
}

export interface McpSetting {
  servers: Record<string, { tools: '*' | string[] }>;
}

export interface RateLimits {
  key_rpm: number | null;
  key_tpm: number | null;
  project_rpm: number | null;
  project_tpm: number | null;
}

/** A model id the gateway serves (GET /v1/models). */
export interface ServedModel {
  id: string;
  providers: string[];
}

/** GET /v1/gateway. */
export interface GatewayInfo {
  /** Where clients send gateway requests, without /v1. */
  public_url: string;
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
  /** Set only in the key history (`include_deleted=true`). */
  deleted_at?: string | null;
}

/** The creation response: the only one that ever carries the secret. */
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
  role: ProjectRole;
  created_at: string;
}

/** A webhook endpoint as listed: never with its secret. */
export interface Webhook {
  id: string;
  project_id: string;
  url: string;
  events: WebhookEventType[];
  enabled: boolean;
  /** Why the gateway disabled it; null while enabled or when someone disabled it by hand. */
  disabled_reason: string | null;
  created_at: string;
}

/** The creation response: the only one that ever carries the signing secret. */
export interface NewWebhook {
  id: string;
  project_id: string;
  url: string;
  events: WebhookEventType[];
  secret: string;
  enabled: boolean;
  created_at: string;
}

export interface WebhookDelivery {
  id: string;
  /** The `webhook-id` header the endpoint sees, the same on every attempt. */
  event_id: string;
  event_type: WebhookEventType;
  status: DeliveryStatus;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  created_at: string;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
}

// The record shapes are the gateway's own contracts, as the API serves them (every field present);
// a type-only import adds nothing to the bundle.
export type { StoredUsageRecord as UsageRecord } from '../../../../shared/src/contracts/usage-record.js';
export type { StoredAuditEvent as AuditEvent } from '../../../../shared/src/contracts/audit-event.js';

/** Sums of GET /v1/usage/summary: per group, and in total. */
export interface SummaryFigures {
  requests: number;
  tokens: { input: number; output: number; total: number; cached: number };
  /** US dollars; null when no record counted has a cost. */
  cost_usd: number | null;
}

export type SummaryGroup = 'project' | 'model' | 'provider' | 'key' | 'endpoint';

export interface UsageSummary<G extends SummaryGroup = 'model'> {
  data: (SummaryFigures & Record<G, string>)[];
  totals: SummaryFigures;
}

/** GET /v1/usage/series: the summary's figures per time bucket and group. */
export interface UsageSeriesAnswer<G extends SummaryGroup = 'model'> {
  bucket_ms: number;
  offset_ms: number;
  data: (SummaryFigures & Record<G, string> & { start: number })[];
}

export interface List<T> {
  data: T[];
}

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
  has_more: boolean;
}
