import type { BudgetRule, BudgetScope } from '@gateway/shared';
import { one, type Queryable } from './connect.js';

/** A project's spending budgets (migration 0014_budgets.sql). */
export interface BudgetRow {
  id: string;
  project_id: string;
  scope: BudgetScope;
  key_id: string | null;
  tag: string | null;
  limit_usd: number;
  period: string;
  timezone: string;
  alert_at: number[];
  created_at: Date;
}

export interface BudgetFields {
  scope: BudgetScope;
  key_id: string | null;
  tag: string | null;
  limit_usd: number;
  period: string;
  timezone: string;
  alert_at: number[];
}

/** Budgets one project may have (each is checked on every request of its scope). */
export const MAX_BUDGETS_PER_PROJECT = 20;

const COLUMNS = 'id, project_id, scope, key_id, tag, limit_usd::float8 as limit_usd, period, timezone, alert_at, created_at';

export async function listBudgets(sql: Queryable, projectId: string): Promise<BudgetRow[]> {
  return sql<BudgetRow[]>`select ${sql.unsafe(COLUMNS)} from budgets where project_id = ${projectId} order by created_at, id`;
}

/** Every budget of every live project, by project (the projection rebuild). */
export async function listAllBudgets(sql: Queryable): Promise<Map<string, BudgetRow[]>> {
  const rows = await sql<BudgetRow[]>`
    select ${sql.unsafe(COLUMNS.split(', ').map((c) => `b.${c}`).join(', '))} from budgets b
    join projects p on p.id = b.project_id where p.deleted_at is null order by b.created_at, b.id`;
  const out = new Map<string, BudgetRow[]>();
  for (const row of rows) {
    const list = out.get(row.project_id) ?? [];
    list.push(row);
    out.set(row.project_id, list);
  }
  return out;
}

export async function findBudget(sql: Queryable, projectId: string, budgetId: string, options: { lock?: boolean } = {}): Promise<BudgetRow | null> {
  const rows = await sql<BudgetRow[]>`
    select ${sql.unsafe(COLUMNS)} from budgets where id = ${budgetId} and project_id = ${projectId}
    ${options.lock ? sql`for update` : sql``}`;
  return rows[0] ?? null;
}

export async function countBudgets(sql: Queryable, projectId: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from budgets where project_id = ${projectId}`;
  return row?.n ?? 0;
}

export async function insertBudget(sql: Queryable, projectId: string, fields: BudgetFields, createdBy: string): Promise<BudgetRow> {
  return one(await sql<BudgetRow[]>`
    insert into budgets (project_id, scope, key_id, tag, limit_usd, period, timezone, alert_at, created_by)
    values (${projectId}, ${fields.scope}, ${fields.key_id}, ${fields.tag}, ${fields.limit_usd}, ${fields.period}, ${fields.timezone},
            ${sql.array(fields.alert_at)}::float8[], ${createdBy})
    returning ${sql.unsafe(COLUMNS)}`);
}

export async function updateBudget(sql: Queryable, projectId: string, budgetId: string, fields: BudgetFields): Promise<BudgetRow | null> {
  const rows = await sql<BudgetRow[]>`
    update budgets set scope = ${fields.scope}, key_id = ${fields.key_id}, tag = ${fields.tag}, limit_usd = ${fields.limit_usd},
      period = ${fields.period}, timezone = ${fields.timezone}, alert_at = ${sql.array(fields.alert_at)}::float8[]
    where id = ${budgetId} and project_id = ${projectId}
    returning ${sql.unsafe(COLUMNS)}`;
  return rows[0] ?? null;
}

export async function deleteBudget(sql: Queryable, projectId: string, budgetId: string): Promise<boolean> {
  const rows = await sql`delete from budgets where id = ${budgetId} and project_id = ${projectId} returning id`;
  return rows.length > 0;
}

/** What the proxies enforce: the row without its bookkeeping. */
export function ruleOf(row: BudgetRow): BudgetRule {
  return {
    id: row.id,
    scope: row.scope,
    key_id: row.key_id,
    tag: row.tag,
    limit_usd: row.limit_usd,
    period: row.period,
    timezone: row.timezone,
    alert_at: row.alert_at,
    created_at: row.created_at.getTime(),
  };
}

/**
 * US dollars of the usage records a budget counts in [from, to): what the ledger is rebuilt from.
 * A tag budget counts the records carrying the tag (usage_records.tags).
 */
export async function spentInWindow(sql: Queryable, row: Pick<BudgetRow, 'project_id' | 'scope' | 'key_id' | 'tag'>, from: number, to: number | null): Promise<number> {
  const until = to ?? Number.MAX_SAFE_INTEGER;
  const filter =
    row.scope === 'key' ? sql`and key_id = ${row.key_id}` : row.scope === 'tag' ? sql`and tags @> ${tagObject(row.tag ?? '')}::jsonb` : sql``;
  const [result] = await sql<{ spent: number | null }[]>`
    select sum(cost_usd)::float8 as spent from usage_records
    where project_id = ${row.project_id} and ts >= ${from} and ts < ${until} ${filter}`;
  return result?.spent ?? 0;
}

function tagObject(tag: string): string {
  const at = tag.indexOf('=');
  return JSON.stringify({ [tag.slice(0, at)]: tag.slice(at + 1) });
}
