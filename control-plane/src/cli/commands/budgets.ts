import type { Budget, BudgetInput, List } from '@gateway/shared';
import type { Column } from '../output.js';
import { UsageError } from '../cli-errors.js';
import { arg, flag, required, text, type CommandSpec } from '../command.js';
import { projectIdOf } from '../resolve.js';

/** A project's spending budgets (docs/budgets.md). */
const BUDGET_COLUMNS: Column<Budget>[] = [
  { field: 'id', get: (b) => b.id },
  { field: 'project_id', get: (b) => b.project_id, csvOnly: true },
  { field: 'scope', get: (b) => (b.scope === 'key' ? `key ${b.key_id}` : b.scope === 'tag' ? `tag ${b.tag}` : 'project') },
  { field: 'key_id', get: (b) => b.key_id, csvOnly: true },
  { field: 'tag', get: (b) => b.tag, csvOnly: true },
  { field: 'period', get: (b) => (b.period === 'day' || b.period === 'week' || b.period === 'month' ? `${b.period} (${b.timezone})` : b.period) },
  { field: 'timezone', get: (b) => b.timezone, csvOnly: true },
  { field: 'spent_usd', title: 'SPENT', kind: 'cost', get: (b) => b.spent_usd },
  { field: 'limit_usd', title: 'LIMIT', kind: 'cost', get: (b) => b.limit_usd },
  { field: 'reserved_usd', title: 'RESERVED', kind: 'cost', get: (b) => b.reserved_usd, csvOnly: true },
  { field: 'alert_at', kind: 'list', get: (b) => b.alert_at, csvOnly: true },
  { field: 'period_start', kind: 'instant', get: (b) => b.period_start, csvOnly: true },
  { field: 'resets_at', title: 'RESETS', kind: 'instant', get: (b) => b.resets_at, blank: 'never' },
];

function dollars(value: string, name: string): number {
  if (!/^\d+(\.\d+)?$/.test(value)) throw new UsageError(`--${name} takes an amount of US dollars such as 25 or 0.50, not "${value}"`);
  return Number(value);
}

function fractions(value: string | undefined): number[] | undefined {
  if (value === undefined) return undefined;
  return value.split(',').map((part) => {
    const trimmed = part.trim();
    const fraction = trimmed.endsWith('%') ? Number(trimmed.slice(0, -1)) / 100 : Number(trimmed);
    if (!Number.isFinite(fraction) || fraction <= 0 || fraction > 1) throw new UsageError(`--alert-at takes fractions of the limit such as 0.8,1 or 80%,100%, not "${trimmed}"`);
    return fraction;
  });
}

export const budgetCommands: CommandSpec[] = [
  {
    path: ['budgets', 'list'],
    args: ['<project>'],
    summary: "A project's spending budgets, with this period's spend and when it resets",
    async run(ctx) {
      const api = await ctx.api();
      const answer = await api.get<List<Budget>>(`/v1/projects/${await projectIdOf(api, arg(ctx, 0))}/budgets`);
      ctx.out.list(answer, answer.data, BUDGET_COLUMNS);
    },
  },
  {
    path: ['budgets', 'create'],
    args: ['<project>'],
    summary: 'Add a spending budget for the project, one key (--key) or one tag (--tag)',
    options: {
      limit: { type: 'string', value: '<usd>', help: 'US dollars per period (required)' },
      period: { type: 'string', value: '<period>', help: 'total, day, week, month, or a fixed window such as 30m, 6h, 7d (required)' },
      key: { type: 'string', value: '<key id>', help: "count only this key's requests" },
      tag: { type: 'string', value: '<name=value>', help: 'count only requests with this tag' },
      timezone: { type: 'string', value: '<zone>', help: 'IANA zone of day, week and month periods (default UTC)' },
      'alert-at': { type: 'string', value: '<fractions>', help: 'send budget.threshold at these fractions of the limit, e.g. 0.8,1' },
    },
    async run(ctx) {
      const key = text(ctx, 'key');
      const tag = text(ctx, 'tag');
      if (key !== undefined && tag !== undefined) throw new UsageError('--key and --tag cannot be combined: a budget has one scope');
      const body: BudgetInput = {
        scope: key !== undefined ? 'key' : tag !== undefined ? 'tag' : 'project',
        limit_usd: dollars(required(ctx, 'limit'), 'limit'),
        period: required(ctx, 'period'),
        ...(key === undefined ? {} : { key_id: key }),
        ...(tag === undefined ? {} : { tag }),
        ...(text(ctx, 'timezone') === undefined ? {} : { timezone: text(ctx, 'timezone') }),
        ...(fractions(text(ctx, 'alert-at')) === undefined ? {} : { alert_at: fractions(text(ctx, 'alert-at')) }),
      };
      const api = await ctx.api();
      const budget = await api.post<Budget>(`/v1/projects/${await projectIdOf(api, arg(ctx, 0))}/budgets`, body);
      ctx.out.item(budget, budget, BUDGET_COLUMNS);
      ctx.out.note(`Created budget ${budget.id}; every proxy enforces it within seconds.`);
    },
  },
  {
    path: ['budgets', 'delete'],
    args: ['<project>', '<budget id>'],
    summary: 'Delete a budget (asks first)',
    options: { yes: { type: 'boolean', short: 'y', help: 'do not ask for confirmation' } },
    async run(ctx) {
      const api = await ctx.api();
      const projectId = await projectIdOf(api, arg(ctx, 0));
      const budget = await api.get<Budget>(`/v1/projects/${projectId}/budgets/${encodeURIComponent(arg(ctx, 1))}`);
      if (!flag(ctx, 'yes') && !(await ctx.term.confirm(`Delete budget ${budget.id} (${budget.scope}, $${budget.limit_usd} ${budget.period})?`, '--yes'))) {
        ctx.out.note('Nothing deleted.');
        return;
      }
      await api.delete(`/v1/projects/${projectId}/budgets/${budget.id}`);
      ctx.out.note(`Deleted budget ${budget.id}.`);
    },
  },
];

