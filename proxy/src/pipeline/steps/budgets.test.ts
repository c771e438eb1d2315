import { describe, expect, it } from 'vitest';
import type { BudgetRule } from '@gateway/shared';
import { applicableRules } from './budgets.js';

const rule = (id: string, scope: BudgetRule['scope'], target: string | null = null): BudgetRule => ({
  id,
  scope,
  key_id: scope === 'key' ? target : null,
  tag: scope === 'tag' ? target : null,
  limit_usd: 1,
  period: 'day',
  timezone: 'UTC',
  alert_at: [],
  created_at: 0,
});

describe('the budgets a request counts against', () => {
  it('is the project list itself when every budget applies (nothing allocated)', () => {
    const rules = [rule('a', 'project'), rule('b', 'project')];
    expect(applicableRules(rules, 'k1', null)).toBe(rules);
  });

  it("takes the project's budgets, the key's own and those of the request's tags", () => {
    const rules = [rule('p', 'project'), rule('k1', 'key', 'k1'), rule('k2', 'key', 'k2'), rule('t', 'tag', 'team=search'), rule('u', 'tag', 'team=ads')];
    expect(applicableRules(rules, 'k1', { team: 'search' })?.map((r) => r.id)).toEqual(['p', 'k1', 't']);
    expect(applicableRules(rules, 'k2', null)?.map((r) => r.id)).toEqual(['p', 'k2']);
  });

  it('is null when none applies', () => {
    expect(applicableRules([rule('k', 'key', 'other'), rule('t', 'tag', 'team=x')], 'k1', { team: 'y' })).toBeNull();
  });
});
