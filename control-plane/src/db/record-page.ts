import type { Fragment } from 'postgres';
import type { Queryable } from './connect.js';

/**
 * Keyset paging over a record table (usage_records, audit_events): rows ordered by (ts, id), the
 * primary key, so each page starts strictly after the last row of the previous one. A row inserted
 * meanwhile lands either before the cursor (not shown) or after it (shown once): no gaps or
 * repeats among the rows, whatever is inserted between pages.
 *
 * Plans: one project walks (project_id, ts, id); every project walks the primary key (ts, id);
 * several projects walk (project_id, ts, id) once per project, each stopping after a page, and
 * merge those short runs. The last is bounded by projects × page size whichever project is busy,
 * where a filtered walk of the primary key could read a busy neighbour's millions of rows first.
 */
export type SortOrder = 'asc' | 'desc';

export interface PageQuery {
  /** null: every project, including records of no project (account admins); else these projects only. */
  projectIds: readonly string[] | null;
  order: SortOrder;
  /** Rows to fetch: the page size plus one, to tell whether more follow. */
  fetch: number;
  after: { ts: number; id: string } | null;
  /** Unix ms, inclusive. */
  from: number | undefined;
  /** Unix ms, exclusive. */
  to: number | undefined;
}

/** The statement for one page; `extra` holds the table's own equality filters. */
export function pageQuery(sql: Queryable, table: 'usage_records' | 'audit_events', columns: string, page: PageQuery, extra: Fragment[]): Fragment {
  const conditions: Fragment[] = [...extra];
  if (page.from !== undefined) conditions.push(sql`ts >= ${page.from}`);
  if (page.to !== undefined) conditions.push(sql`ts < ${page.to}`);
  if (page.after !== null) {
    // The plain ts bound repeats what the row comparison says, for the partition pruner, which
    // does not read row comparisons: later pages skip the months already read.
    const { ts, id } = page.after;
    conditions.push(page.order === 'desc' ? sql`ts <= ${ts} and (ts, id) < (${ts}, ${id}::uuid)` : sql`ts >= ${ts} and (ts, id) > (${ts}, ${id}::uuid)`);
  }
  const orderBy = page.order === 'desc' ? sql`order by ts desc, id desc` : sql`order by ts asc, id asc`;
  const select = (where: Fragment[]) => sql`select ${sql.unsafe(columns)} from ${sql(table)} ${whereClause(sql, where)} ${orderBy} limit ${page.fetch}`;

  const ids = page.projectIds;
  if (ids === null) return select(conditions);
  if (ids.length === 1) return select([sql`project_id = ${ids[0] ?? null}`, ...conditions]);
  return sql`
    select r.* from unnest(${sql.array(ids as string[])}::uuid[]) as p(project)
    cross join lateral (${select([sql`project_id = p.project`, ...conditions])}) r
    ${orderBy} limit ${page.fetch}`;
}

function whereClause(sql: Queryable, conditions: Fragment[]): Fragment {
  if (conditions.length === 0) return sql``;
  return sql`where ${conditions.reduce((all, c) => sql`${all} and ${c}`)}`;
}
