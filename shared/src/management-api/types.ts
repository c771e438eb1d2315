import type { ServedModel } from '../config/served-models.js';
import type { QuotaPeriod, RateLimits, UnsupportedParams } from '../contracts/project-policy.js';
import type { AccountRole, ProjectRole } from './roles.js';
import type { McpSetting } from '../contracts/mcp-setting.js';
import type { CacheSetting } from '../contracts/cache-setting.js';

export type { McpSetting };

/**
 * The management API's answers (docs/management-api.md), declared once: the control plane builds
 * them, the dashboard and gatewayctl read them. Types and constant lists only, so the dashboard's
 * bundle imports this file as it is; the server's JSON schemas (control-plane/src/http/schemas.ts)
 * describe the same shapes for validation and the OpenAPI document.
 */

/** The events a webhook can subscribe to (docs/webhooks.md#events). */
export const WEBHOOK_EVENT_TYPES = ['key.created', 'key.deleted', 'project.updated', 'quota.threshold', 'budget.threshold', 'gateway.request.failed', 'guardrail.blocked'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** The audit types the control plane writes besides `gateway.request`, in the order they are documented. */
export const AUDIT_TYPES = [
  'gateway.request',
  'key.created',
  'key.deleted',
  'project.created',
  'project.updated',
  'project.deleted',
  'project.cache_purged',
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

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  /** Seconds. */
  expires_in: number;
}

/** An account: never a password hash, nor the revocation instant. */
export interface User {
  id: string;
  email: string;
  role: AccountRole;
  /** A disabled account cannot sign in; its sessions ended when it was disabled. */
  disabled: boolean;
  created_at: string;
}

export interface Project {
  id: string;
  name: string;
  /** Null: no quota. */
  quota_tokens: number | null;
  /** What the quota counts: all time, or each calendar month (UTC). */
  quota_period: QuotaPeriod;
  /** Tokens used in the quota's current period. */
  used_tokens: number;
  /** Per-minute limits; null: none. */
  rate_limits: RateLimits;
  /** Models the project may use; null: every model the gateway serves. */
  allowed_models: string[] | null;
  /** Largest max_tokens a request may ask for; null: none. */
  max_tokens_cap: number | null;
  /** Most completions (`n`) one request may ask for; null: the default, 8. */
  max_n?: number | null;
  /** Model id asked for → model id served; absent: none. */
  model_aliases?: Record<string, string> | null;
  /**
   * A parameter with no counterpart in a translated request: dropped (named in
   * x-gateway-dropped-params) or the request refused (400 UNSUPPORTED_PARAMETER). Every answer
   * shows it, `drop` when unset; optional only so a Project written before the field still types.
   */
  unsupported_params?: UnsupportedParams;
  /**
   * How long the gateway keeps the project's Responses API state (stored responses and their
   * conversations). Every answer shows it, `{ ttl_days: 30 }` when unset; optional only so a
   * Project written before the field still types.
   */
  responses?: ResponsesSetting;
  /** MCP servers and tools the project's keys may use; null: none. */
  mcp: McpSetting | null;
  /** The response cache: mode off (the default) or exact, and the entries' life. */
  cache: CacheSetting;
  created_at: string;
}

/** A project's `responses` setting: days a stored response is kept after it was written. */
export interface ResponsesSetting {
  ttl_days: number;
}

/** A stored response's life when the project sets none, and the longest a project may set. */
export const DEFAULT_RESPONSES_TTL_DAYS = 30;
export const MAX_RESPONSES_TTL_DAYS = 3650;

/**
 * PUT /internal/v1/responses/{id} (proxies only, with INTERNAL_TOKEN): a response the proxy
 * stores, written whole (again under the same id: replaced), kept for the project's
 * `responses.ttl_days` from the write.
 */
export interface StoredResponseWrite {
  v: 1;
  project_id: string;
  /** The provider entry that stored the response itself; null for one the gateway keeps. */
  provider: string | null;
  model: string;
  input_items: unknown[];
  /** The response as the client got it; null for a provider-stored one. */
  response: Record<string, unknown> | null;
  /** The conversation so far in the gateway's internal chat format; null: it cannot be continued. */
  messages: unknown[] | null;
}

/** GET /internal/v1/responses/{id}?project_id=…: a stored response, until it expires. */
export interface StoredResponseRecord extends Omit<StoredResponseWrite, 'v'> {
  v: 1;
  id: string;
  created_at: string;
  expires_at: string;
}

/** GET /v1/projects/{id}/cache: the setting and what the cache did over the last `window_days`. */
export interface ProjectCacheStats {
  cache: CacheSetting;
  window_days: number;
  /** Requests that looked the cache up (hits and misses; bypasses are not lookups). */
  lookups: number;
  hits: number;
  /** hits / lookups; null without lookups. */
  hit_rate: number | null;
  /** US dollars the hits did not spend; null when no hit had a priced model. */
  saved_usd: number | null;
}

/** A key as listed: never the hash, never the secret. */
export interface ApiKey {
  id: string;
  project_id: string;
  name: string;
  prefix: string;
  created_by: string | null;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  /** Null while the key is live. */
  deleted_at: string | null;
  /** Default cost-attribution tags of the key's requests ({} when none); request tags win. */
  tags: Record<string, string>;
}

/** The creation answer: the only one that ever carries the secret. */
export interface NewApiKey {
  id: string;
  project_id: string;
  name: string;
  prefix: string;
  key: string;
  created_at: string;
  expires_at: string | null;
  tags: Record<string, string>;
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

/** The creation answer: the only one that ever carries the signing secret. */
export interface NewWebhook extends Omit<Webhook, 'disabled_reason'> {
  secret: string;
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
  /** When the next attempt is due; null once the delivery is settled. */
  next_attempt_at: string | null;
}

/** GET /v1/models answers `{data: ServedModel[]}` (config/served-models.ts). */
export type { ServedModel };

/** GET /v1/gateway. */
export interface GatewayInfo {
  /** Where clients send gateway requests, without /v1. */
  public_url: string;
}

// The records of GET /v1/usage and GET /v1/audit are the contracts' StoredUsageRecord and StoredAuditEvent.

export type SummaryGroup = 'project' | 'model' | 'provider' | 'key' | 'endpoint';

/** Sums of GET /v1/usage/summary: per group, and in total. */
export interface SummaryFigures {
  requests: number;
  tokens: { input: number; output: number; total: number; cached: number };
  /** US dollars; null when no record counted has a cost. */
  cost_usd: number | null;
}

/** What a summary entry names its group under: a SummaryGroup, or `end_user` / `tag` (null: the records without one). */
export type SummaryGroupKey = SummaryGroup | 'end_user' | 'tag';

export interface UsageSummary<G extends SummaryGroupKey = SummaryGroup> {
  /** Busiest group (most total tokens) first; each entry names its group under the group's key. */
  data: (SummaryFigures & Record<G, G extends 'end_user' | 'tag' ? string | null : string>)[];
  totals: SummaryFigures;
}

/** GET /v1/usage/series: the summary's figures per time bucket and group. */
export interface UsageSeriesAnswer<G extends SummaryGroup = SummaryGroup> {
  bucket_ms: number;
  offset_ms: number;
  data: (SummaryFigures & Record<G, string> & { start: number })[];
}

/** POST /v1/usage/export/links. */
export interface ExportLink {
  /** Relative to the control plane; add the export's filters. */
  url: string;
  /** Seconds. */
  expires_in: number;
}

export interface List<T> {
  data: T[];
}

/** A keyset-paged list: follow `next_cursor` while `has_more`. */
export interface Page<T> extends List<T> {
  next_cursor: string | null;
  has_more: boolean;
}

/**
 * GET /internal/v1/responses/items?project_id=…&id=…: the project's stored input and output items
 * of those ids, as they were stored, for `item_reference` input items; ids not found are absent.
 */
export interface StoredItems {
  v: 1;
  items: Record<string, unknown>;
}
