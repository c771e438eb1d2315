import type { GatewayEndpoint } from './gateway-endpoint.js';
import type { RecordTags } from './usage-record.js';

/**
 * One per gateway request, and one per management action (DESIGN §4). Never carries a secret:
 * keys appear as key_id, users as actor (a user id), tokens and passwords not at all.
 *
 * The fields added with batch version 2 are optional here, and the writer stores their defaults
 * when an event leaves them out (see `StoredAuditEvent`).
 */
export type AuditOutcome = 'success' | 'auth_failed' | 'policy_blocked' | 'error' | 'cancelled';

export const AUDIT_OUTCOMES: readonly AuditOutcome[] = ['success', 'auth_failed', 'policy_blocked', 'error', 'cancelled'];

/** Most provider attempts one request may record (a fallback chain is a handful). */
export const MAX_RECORD_ATTEMPTS = 1000;
/** Most provider names one request may record, and the longest name. */
export const MAX_RECORD_PROVIDERS = 20;
export const MAX_PROVIDER_NAME_LENGTH = 64;

export interface AuditEvent {
  id: string;
  request_id: string;
  /** Unix ms. */
  timestamp: number;
  /** gateway.request, key.created, key.deleted, project.*, signin.*, member.*, user.* */
  type: string;
  outcome: AuditOutcome;
  status: number;
  error_code: string | null;
  project_id: string | null;
  key_id: string | null;
  /** The acting user's id for management actions; null for gateway traffic. */
  actor: string | null;
  model: string | null;
  /** The provider that answered (the last one tried), or null. */
  provider: string | null;
  /**
   * The inbound API of a gateway request; null for management actions and for requests on no
   * inference endpoint (`/v1/models`). Absent: `chat.completions` for gateway.request, else null.
   */
  endpoint?: GatewayEndpoint | null;
  /** Provider attempts made for this request, 0 when none. Absent: 1 with a provider, else 0. */
  attempts?: number;
  /** Names of the providers tried, in order; empty when none. Absent: `[provider]` or `[]`. */
  providers?: string[];
  /** An MCP request's server, tool (tools/call only) and JSON-RPC method; absent or null otherwise. */
  mcp?: McpAuditFacts | null;
  client_ip: string | null;
  user_agent: string | null;
  latency_ms: number;
  /**
   * Requests this event stands for (batch version 3): 1, except a `gateway.throttled` event, which
   * accounts for every request one client address sent in one second while throttled. Absent: 1.
   */
  count?: number;
  /**
   * Providers serving the model that were not tried because they were in a cooldown after
   * failing (batch version 3). Absent: none.
   */
  skipped?: string[];
  /** Cost-attribution tags (batch version 4). Absent: {}. */
  tags?: RecordTags;
  /** The client's end user (batch version 4). Absent: null. */
  end_user?: string | null;
  /** What the response cache did, for a project that has it on (batch version 4). Absent: null. */
  cache?: CacheOutcome | null;
  /** Every guardrail that acted on the request, in order (batch version 4). Absent: none. */
  guardrails?: GuardrailDecision[];
  /** The batch (`batch_…` / `msgbatch_…`) this request was a line of (batch version 6). Absent: null. */
  batch_id?: string | null;
}

export type CacheOutcome = 'hit' | 'miss' | 'bypass';
export const CACHE_OUTCOMES: readonly CacheOutcome[] = ['hit', 'miss', 'bypass'];

export type GuardrailStage = 'input' | 'output';
export type GuardrailAction = 'block' | 'mask' | 'flag';
export const GUARDRAIL_ACTIONS: readonly GuardrailAction[] = ['block', 'mask', 'flag'];

/** One guardrail's decision on one request. */
export interface GuardrailDecision {
  id: string;
  stage: GuardrailStage;
  action: GuardrailAction;
  /** The guard could not decide (a webhook failed or timed out) and its `failure_mode: open` let the request through. */
  failed?: true;
}

export interface McpAuditFacts {
  server: string;
  /** The tool called (its name on the server), null for every other MCP request. */
  tool: string | null;
  /** The JSON-RPC method (`tools/call`, `initialize`, …); `GET` / `DELETE` for the stream and session requests. */
  method: string;
}

/** What a management action was done to; `member` is the user id of a project member. */
export type AuditTargetType = 'user' | 'member' | 'project' | 'key' | 'webhook' | 'budget' | 'batch';
export const AUDIT_TARGET_TYPES: readonly AuditTargetType[] = ['user', 'member', 'project', 'key', 'webhook', 'budget', 'batch'];

export interface AuditTarget {
  type: AuditTargetType;
  id: string;
}

/**
 * An audit event as Postgres holds it and the management API serves it: every field present.
 * `target` is written by the control plane for its own actions; gateway requests have none.
 */
export interface StoredAuditEvent
  extends Omit<AuditEvent, 'endpoint' | 'attempts' | 'providers' | 'mcp' | 'count' | 'skipped' | 'tags' | 'end_user' | 'cache' | 'guardrails' | 'batch_id'> {
  endpoint: GatewayEndpoint | null;
  mcp: McpAuditFacts | null;
  attempts: number;
  providers: string[];
  target: AuditTarget | null;
  count: number;
  skipped: string[];
  tags: RecordTags;
  end_user: string | null;
  cache: CacheOutcome | null;
  guardrails: GuardrailDecision[];
  batch_id: string | null;
}
