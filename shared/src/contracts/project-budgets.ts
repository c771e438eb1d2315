import { ContractError, expectObject, expectString, parseVersioned } from './version.js';

/**
 * A project's spending budgets (DESIGN §7 "Budgets"), projected by the control plane into Redis at
 * RedisKeys.projectBudgets(id) beside the project's policy (same hash tag, read with it in one
 * MGET) and re-read by proxies after a project.updated message, as the policy is. A project
 * without budgets has no key, or one with an empty list.
 */
export type BudgetScope = 'project' | 'key' | 'tag';

export interface BudgetRule {
  id: string;
  scope: BudgetScope;
  /** The key the budget counts (scope `key`), else null. */
  key_id: string | null;
  /** `name=value` the budget counts (scope `tag`), else null. */
  tag: string | null;
  limit_usd: number;
  /** `total`, `day`, `week`, `month` (calendar, in `timezone`) or `<n>m|h|d` (fixed windows). */
  period: string;
  /** IANA zone of calendar periods. */
  timezone: string;
  /** Fractions of the limit that raise a `budget.threshold` webhook. */
  alert_at: number[];
  /** Unix ms: where fixed windows are counted from. */
  created_at: number;
}

export interface ProjectBudgets {
  v: 1;
  project_id: string;
  budgets: BudgetRule[];
}

const NAME = 'ProjectBudgets';

export function encodeProjectBudgets(projectId: string, budgets: readonly BudgetRule[]): string {
  return JSON.stringify({ v: 1, project_id: projectId, budgets });
}

export function decodeProjectBudgets(raw: string): ProjectBudgets {
  const obj = parseVersioned(NAME, raw, [1]);
  const list = obj.budgets;
  if (!Array.isArray(list)) throw new ContractError(NAME, 'budgets must be a list');
  return { v: 1, project_id: expectString(NAME, obj, 'project_id'), budgets: list.map(decodeRule) };
}

function decodeRule(value: unknown): BudgetRule {
  const obj = expectObject(NAME, value);
  const scope = obj.scope;
  if (scope !== 'project' && scope !== 'key' && scope !== 'tag') throw new ContractError(NAME, 'scope must be project, key or tag');
  const limit = obj.limit_usd;
  if (typeof limit !== 'number' || !Number.isFinite(limit) || limit < 0) throw new ContractError(NAME, 'limit_usd must be a non-negative number');
  const alerts = obj.alert_at;
  if (!Array.isArray(alerts) || !alerts.every((a) => typeof a === 'number')) throw new ContractError(NAME, 'alert_at must be a list of numbers');
  const created = obj.created_at;
  if (typeof created !== 'number') throw new ContractError(NAME, 'created_at must be a number');
  const period = expectString(NAME, obj, 'period');
  if (!isBudgetPeriod(period)) throw new ContractError(NAME, `period ${period} is not one this build knows`);
  return {
    id: expectString(NAME, obj, 'id'),
    scope,
    key_id: typeof obj.key_id === 'string' ? obj.key_id : null,
    tag: typeof obj.tag === 'string' ? obj.tag : null,
    limit_usd: limit,
    period,
    timezone: expectString(NAME, obj, 'timezone'),
    alert_at: alerts as number[],
    created_at: created,
  };
}

const FIXED = /^([1-9][0-9]{0,5})(m|h|d)$/;

export function isBudgetPeriod(period: string): boolean {
  return period === 'total' || period === 'day' || period === 'week' || period === 'month' || FIXED.test(period);
}

/** Milliseconds of a fixed window (`30m`, `6h`, `7d`), or null for total and calendar periods. */
export function fixedWindowMs(period: string): number | null {
  const match = FIXED.exec(period);
  if (match === null) return null;
  const unit = match[2] === 'm' ? 60_000 : match[2] === 'h' ? 3_600_000 : 86_400_000;
  return Number(match[1]) * unit;
}
