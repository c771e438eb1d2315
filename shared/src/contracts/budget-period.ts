import { DateTime, IANAZone } from 'luxon';
import { fixedWindowMs, type BudgetRule } from './project-budgets.js';

/**
 * The period a budget counts in at a given time. Calendar periods (`day`, `week`, `month`) start at
 * midnight, on Monday and on the 1st in the budget's IANA time zone (so a day may last 23 or 25
 * hours across a DST change: luxon does the zone arithmetic); `<n>m|h|d` are fixed windows counted
 * from the budget's creation; `total` never resets. `id` names the period in ledger keys: the same
 * budget and time give the same id on every proxy and control plane.
 */
export interface BudgetWindow {
  id: string;
  /** Unix ms, inclusive (0 for `total`). */
  start: number;
  /** Unix ms, exclusive (null for `total`: never resets). */
  end: number | null;
}

export function isTimezone(zone: string): boolean {
  return IANAZone.isValidZone(zone);
}

export function budgetWindow(rule: Pick<BudgetRule, 'period' | 'timezone' | 'created_at'>, now: number): BudgetWindow {
  const { period } = rule;
  if (period === 'total') return { id: 'total', start: 0, end: null };
  const fixed = fixedWindowMs(period);
  if (fixed !== null) {
    const start = rule.created_at + Math.floor((now - rule.created_at) / fixed) * fixed;
    return { id: `w${start}`, start, end: start + fixed };
  }
  const unit = period === 'day' ? 'day' : period === 'week' ? 'week' : 'month';
  const local = DateTime.fromMillis(now, { zone: rule.timezone }).startOf(unit);
  const start = local.toMillis();
  const end = local.plus(unit === 'day' ? { days: 1 } : unit === 'week' ? { weeks: 1 } : { months: 1 }).toMillis();
  return { id: `c${start}`, start, end };
}
