import { randomBytes } from 'node:crypto';
import postgres from 'postgres';

/**
 * Throwaway PostgreSQL databases beside the server's default one: each use gets a fresh name,
 * and every one is dropped at the end of the run, whatever happened.
 */
export interface FreshDatabase {
  name: string;
  url: string;
  create(): Promise<void>;
  drop(): Promise<void>;
}

const made = new Set<FreshDatabase>();

export function freshDatabase(baseUrl: string, label: string): FreshDatabase {
  const name = `gwbench_${label.replace(/[^a-z0-9]/gi, '').toLowerCase().slice(0, 16)}_${randomBytes(4).toString('hex')}`;
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  const admin = () => postgres(baseUrl, { max: 1, onnotice: () => {} });
  const db: FreshDatabase = {
    name,
    url: url.toString(),
    async create() {
      const sql = admin();
      try {
        await sql`create database ${sql(name)}`;
      } finally {
        await sql.end({ timeout: 1 });
      }
    },
    async drop() {
      made.delete(db);
      const sql = admin();
      try {
        await sql`drop database if exists ${sql(name)} with (force)`;
      } finally {
        await sql.end({ timeout: 1 });
      }
    },
  };
  made.add(db);
  return db;
}

/** Drops every database this run named (a control plane may have created one itself). */
export async function dropAllDatabases(): Promise<void> {
  for (const db of [...made]) await db.drop().catch(() => {});
}

export function connect(url: string, max = 1) {
  return postgres(url, { max, onnotice: () => {} });
}
