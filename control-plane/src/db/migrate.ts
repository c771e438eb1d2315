import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Db } from './connect.js';

/**
 * Forward-only migrations: plain SQL files applied in name order, each in its own transaction,
 * recorded in schema_migrations. An advisory lock lets several control planes start at once
 * without racing to apply the same file.
 */
const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));
const LOCK_ID = 7_236_501_114;

export interface MigrationResult {
  applied: string[];
  alreadyApplied: number;
}

export async function migrate(sql: Db, dir: string = MIGRATIONS_DIR): Promise<MigrationResult> {
  const files = (await readdir(dir)).filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f)).sort();
  const applied: string[] = [];
  let alreadyApplied = 0;
  await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${LOCK_ID})`;
    await tx`create table if not exists schema_migrations (
      version text primary key,
      applied_at timestamptz not null default now()
    )`;
    const done = new Set((await tx<{ version: string }[]>`select version from schema_migrations`).map((r) => r.version));
    for (const file of files) {
      if (done.has(file)) {
        alreadyApplied++;
        continue;
      }
      const text = await readFile(`${dir}/${file}`, 'utf8');
      await tx.unsafe(text);
      await tx`insert into schema_migrations (version) values (${file})`;
      applied.push(file);
    }
  });
  return { applied, alreadyApplied };
}
