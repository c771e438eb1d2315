/**
 * One per gateway request, and one per management action (DESIGN §4). Never carries a secret:
 * keys appear as key_id, users as actor (a user id), tokens and passwords not at all.
 */
export type AuditOutcome = 'success' | 'auth_failed' | 'policy_blocked' | 'error' | 'cancelled';

export const AUDIT_OUTCOMES: readonly AuditOutcome[] = ['success', 'auth_failed', 'policy_blocked', 'error', 'cancelled'];

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
  provider: string | null;
  client_ip: string | null;
  user_agent: string | null;
  latency_ms: number;
}
