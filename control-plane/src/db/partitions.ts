import type { Db } from './connect.js';

/**
 * Monthly partitions of the record tables. Created ahead of time (so a record never lands in
 * the default partition in normal operation) and dropped whole when older than the retention.
 * Partition names are built here from fixed table names and dates, never from input.
 */
export const PARTITIONED_TABLES = ['usage_records', 'audit_events'] as const;

function monthStart(year: number, month: number): number {
  return Date.UTC(year, month, 1);
}

function suffix(year: number, month: number): string {
  const d = new Date(monthStart(year, month));
  return `p${d.getUTCFullYear()}${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** Ensures partitions exist for the month of `now` and the `ahead` months after it. */
export async function ensurePartitions(sql: Db, now: number = Date.now(), ahead = 2, behind = 1): Promise<string[]> {
  const created: string[] = [];
  const d = new Date(now);
  for (const table of PARTITIONED_TABLES) {
    for (let i = -behind; i <= ahead; i++) {
      const y = d.getUTCFullYear();
      const m = d.getUTCMonth() + i;
      const name = `${table}_${suffix(y, m)}`;
      const exists = await sql`select 1 from pg_class where relname = ${name}`;
      if (exists.length > 0) continue;
      try {
        // DDL takes no bind parameters: the bounds go in as literals (integers computed here).
        const from = sql.unsafe(String(monthStart(y, m)));
        const to = sql.unsafe(String(monthStart(y, m + 1)));
        await sql`create table ${sql(name)} partition of ${sql(table)} for values from (${from}) to (${to})`;
        created.push(name);
      } catch (err) {
        const code = (err as { code?: string }).code;
        // 42P07: another process created it first. 23514: rows for that month already sit in the
        // default partition; they stay there (still queryable) and the month is left unpartitioned.
        if (code !== '42P07' && code !== '23514') throw err;
      }
    }
  }
  return created;
}

/** Drops every monthly partition that ends at or before `cutoff` (Unix ms). Returns their names. */
export async function dropPartitionsBefore(sql: Db, cutoff: number): Promise<string[]> {
  const dropped: string[] = [];
  for (const table of PARTITIONED_TABLES) {
    const parts = await sql<{ name: string; bound: string }[]>`
      select c.relname as name, pg_get_expr(c.relpartbound, c.oid) as bound
      from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent
      where p.relname = ${table}`;
    for (const part of parts) {
      const match = /TO \('?(-?\d+)'?\)/.exec(part.bound);
      if (!match || Number(match[1]) > cutoff) continue;
      await sql`drop table if exists ${sql(part.name)}`;
      dropped.push(part.name);
    }
  }
  return dropped;
}
