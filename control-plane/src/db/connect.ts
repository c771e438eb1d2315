import postgres, { type ISql, type Sql } from 'postgres';
import { PermanentStartupFailure, reasonOf, waitForDependency, type StartupWait } from '@gateway/shared';

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
  /**
   * At a process's start: wait for PostgreSQL this way (retries, a log line each). Without it one
   * attempt, as when a running process replaces its pool.
   */
  wait?: StartupWait;
}

/**
 * Connects to DATABASE_URL, creating the database first when asked, waiting for PostgreSQL when
 * told to. Failures become a StartupError that names the (redacted) URL and how to start
 * PostgreSQL; a refused password ends the wait at once.
 */
export async function connectDb(url: string, options: DbOptions = {}): Promise<Db> {
  return waitForDependency('postgres', url, () => connectOnce(url, options), options.wait ?? { timeoutMs: 0 });
}

async function connectOnce(url: string, options: DbOptions): Promise<Db> {
  try {
    if (options.createIfMissing) await ensureDatabase(url);
  } catch (err) {
    throw failure(err);
  }
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
    throw failure(err);
  }
  return sql;
}

/** Class 28 (the password or the role refused): waiting will not change the answer. */
function failure(err: unknown): unknown {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('28') ? new PermanentStartupFailure(reasonOf(err)) : err;
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
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}

/** The single row a statement that always returns one (insert … returning, count) produced. */
export function one<T>(rows: readonly T[]): T {
  const row = rows[0];
  if (row === undefined) throw new Error('expected one row, got none');
  return row;
}

/** The pool or a transaction: query functions take either, so a route can group statements atomically. */
export type Queryable = ISql<Record<string, never>>;
