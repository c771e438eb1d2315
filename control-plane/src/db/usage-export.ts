import type { Queryable } from './connect.js';
import type { PageQuery, SortOrder } from './record-page.js';
import { usageListQuery, type UsageFilter, type UsageRow } from './usage.js';

/**
 * The usage records a filter selects, read page by page for an export of any size: each page is
 * one keyset query of the list's own plan (GET /v1/usage), so no statement or transaction stays
 * open while a slow client reads, memory holds one page, and rows inserted meanwhile never make a
 * row appear twice. Each page comes with the names of its keys and projects (deleted ones keep
 * their names), looked up once per page.
 */
export const EXPORT_PAGE_SIZE = 1000;

export interface ExportScope {
  projectIds: readonly string[] | null;
  order: SortOrder;
  from: number | undefined;
  to: number | undefined;
}

export interface ExportPage {
  rows: UsageRow[];
  keyNames: Map<string, string>;
  projectNames: Map<string, string>;
}

export async function* usageExportPages(sql: Queryable, scope: ExportScope, filter: UsageFilter, pageSize = EXPORT_PAGE_SIZE): AsyncGenerator<ExportPage> {
  let after: PageQuery['after'] = null;
  for (;;) {
    const page: PageQuery = { projectIds: scope.projectIds, order: scope.order, fetch: pageSize, after, from: scope.from, to: scope.to };
    const rows = (await usageListQuery(sql, page, filter)) as unknown as UsageRow[];
    if (rows.length === 0) return;
    yield { rows, ...(await namesOf(sql, rows)) };
    if (rows.length < pageSize) return;
    const last = rows[rows.length - 1] as UsageRow;
    after = { ts: Number(last.ts), id: last.id };
  }
}

async function namesOf(sql: Queryable, rows: readonly UsageRow[]): Promise<{ keyNames: Map<string, string>; projectNames: Map<string, string> }> {
  const keyIds = [...new Set(rows.map((r) => r.key_id))];
  const projectIds = [...new Set(rows.map((r) => r.project_id))];
  const [keys, projects] = await Promise.all([
    sql`select id::text as id, name from api_keys where id = any(${sql.array(keyIds)}::uuid[])` as unknown as Promise<{ id: string; name: string }[]>,
    sql`select id::text as id, name from projects where id = any(${sql.array(projectIds)}::uuid[])` as unknown as Promise<{ id: string; name: string }[]>,
  ]);
  return { keyNames: new Map(keys.map((k) => [k.id, k.name])), projectNames: new Map(projects.map((p) => [p.id, p.name])) };
}
