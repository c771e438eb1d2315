import { randomBytes } from 'node:crypto';
import postgres from 'postgres';

/**
 * Each test file gets its own PostgreSQL database (created here, dropped in afterAll) and its
 * own Redis key prefix, so files run in parallel against the one local server without meeting.
 */
export const PG_BASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

export function uniqueName(label: string): string {
  return `gwt_${label.replace(/[^a-z0-9]/gi, '').toLowerCase().slice(0, 20)}_${randomBytes(4).toString('hex')}`;
}

/** A database name the control plane will create itself (it creates a missing database at start). */
export function freshDatabaseUrl(label: string): TestDatabase {
  const name = uniqueName(label);
  const url = new URL(PG_BASE_URL);
  url.pathname = `/${name}`;
  return { name, url: url.toString(), drop: () => dropDatabase(name) };
}

export async function dropDatabase(name: string): Promise<void> {
  const sql = postgres(PG_BASE_URL, { max: 1, onnotice: () => {} });
  try {
    await sql`drop database if exists ${sql(name)} with (force)`;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

export function testRedisPrefix(label: string): string {
  return `${uniqueName(label)}:`;
}
