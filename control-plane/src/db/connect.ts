import postgres, { type ISql, type Sql } from 'postgres';
import { StartupError, unreachableMessage } from '@gateway/shared';

export type Db = Sql<Record<string, never>>;

export interface DbOptions {
  max?: number;
  /** Create the database named in the URL when it does not exist yet. */
  createIfMissing?: boolean;
  /**
   * Ask the server for its array types on connecting (needed to send JS arrays as parameters).
   * postgres.js runs that query on a fresh connection with no caller to receive its failure, so a
   * pool whose connections the server drops (the writer's, through an outage) turns it off and
   * builds its array literals itself.
   */
  fetchTypes?: boolean;
}

/**
 * Connects to DATABASE_URL, creating the database first when asked. Failures become a
 * StartupError that names the (redacted) URL and how to start PostgreSQL.
 */
export async function connectDb(url: string, options: DbOptions = {}): Promise<Db> {
  if (options.createIfMissing) await ensureDatabase(url);
  const sql = postgres(url, {
    max: options.max ?? 10,
    onnotice: () => {},
    connect_timeout: 5,
    fetch_types: options.fetchTypes ?? true,
    // bigint columns (token counts, ms timestamps) stay far below 2^53.
    types: { bigint: postgres.BigInt },
    transform: { undefined: null },
  }) as unknown as Db;
  try {
    await sql`select 1`;
  } catch (err) {
    await sql.end({ timeout: 1 }).catch(() => {});
    throw new StartupError(unreachableMessage('postgres', url, reasonOf(err)));
  }
  return sql;
}

async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const dbName = decodeURIComponent(target.pathname.replace(/^\//, '')) || 'postgres';
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const sql = postgres(admin.toString(), { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    const rows = await sql`select 1 from pg_database where datname = ${dbName}`;
    if (rows.length === 0) {
      try {
        await sql`create database ${sql(dbName)}`;
      } catch (err) {
        // Another process created it between our check and our create.
        if ((err as { code?: string }).code !== '42P04') throw err;
      }
    }
  } catch (err) {
    throw new StartupError(unreachableMessage('postgres', url, reasonOf(err)));
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}

function reasonOf(err: unknown): string {
  const e = err as { code?: string; message?: string };
  return e.code ?? e.message ?? 'unknown error';
}

/** The single row a statement that always returns one (insert … returning, count) produced. */
export function one<T>(rows: readonly T[]): T {
  const row = rows[0];
  if (row === undefined) throw new Error('expected one row, got none');
  return row;
}

/** The pool or a transaction: query functions take either, so a route can group statements atomically. */
export type Queryable = ISql<Record<string, never>>;
