import type { BudgetScope } from '../contracts/project-budgets.js';

/** A spending budget as the management API shows it (docs/budgets.md). */
export interface Budget {
  id: string;
  project_id: string;
  scope: BudgetScope;
  key_id: string | null;
  tag: string | null;
  limit_usd: number;
  period: string;
  timezone: string;
  alert_at: number[];
  /** Settled spend in the current period, US dollars. */
  spent_usd: number;
  /** Held by requests in flight and the proxies' unspent leases. */
  reserved_usd: number;
  period_start: string;
  /** When the period ends and spend starts again at 0; null for `total`. */
  resets_at: string | null;
  created_at: string;
}

/** The body of `POST /v1/projects/{id}/budgets` (and, every field optional, of PATCH). */
export interface BudgetInput {
  scope: BudgetScope;
  key_id?: string;
  tag?: string;
  limit_usd: number;
  period: string;
  timezone?: string;
  alert_at?: number[];
}
