import type { ApiKey } from '@gateway/shared';
import { cancelBatchesOfDeletedKeys } from './batches.js';
import { one, type Queryable } from './connect.js';

/** API keys in Postgres: the source of truth the Redis projection is made from. No secret is stored. */
interface KeyRow {
  id: string;
  project_id: string;
  name: string;
  prefix: string;
  key_hash: string;
  created_by: string | null;
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
  deleted_at: Date | null;
  tags: Record<string, string>;
}

/** As the API shows it: declared once, in shared (management-api/types.ts). */
export type { ApiKey };

/** What deletion and projection need besides the public fields. */
export interface StoredKey extends ApiKey {
  key_hash: string;
  deleted: boolean;
}

const COLUMNS = 'id, project_id, name, prefix, key_hash, created_by, created_at, expires_at, last_used_at, deleted_at, tags';

function toStoredKey(row: KeyRow): StoredKey {
  return {
    id: row.id,
    project_id: row.project_id,
    name: row.name,
    prefix: row.prefix,
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at?.toISOString() ?? null,
    last_used_at: row.last_used_at?.toISOString() ?? null,
    deleted_at: row.deleted_at?.toISOString() ?? null,
    tags: row.tags,
    key_hash: row.key_hash,
    deleted: row.deleted_at !== null,
  };
}

export async function insertKey(
  sql: Queryable,
  key: { projectId: string; name: string; prefix: string; keyHash: string; createdBy: string; expiresAt: Date | null; tags: Record<string, string> },
): Promise<StoredKey> {
  const row = one(await sql<KeyRow[]>`
    insert into api_keys (project_id, name, prefix, key_hash, created_by, expires_at, tags)
    values (${key.projectId}, ${key.name}, ${key.prefix}, ${key.keyHash}, ${key.createdBy}, ${key.expiresAt}, ${sql.json(key.tags)})
    returning ${sql.unsafe(COLUMNS)}`);
  return toStoredKey(row);
}

/**
 * The project's keys that are not deleted (expired ones included, so they can be seen and cleaned
 * up); with `includeDeleted`, the deleted ones too, for the key history.
 */
export async function listKeys(sql: Queryable, projectId: string, options: { includeDeleted?: boolean } = {}): Promise<StoredKey[]> {
  const rows = await sql<KeyRow[]>`
    select ${sql.unsafe(COLUMNS)} from api_keys
    where project_id = ${projectId} ${options.includeDeleted ? sql`` : sql`and deleted_at is null`}
    order by created_at, id`;
  return rows.map(toStoredKey);
}

/**
 * The keys of every live project an account may read, in one statement: every project for an
 * account admin (`userId` null), else the projects it is a member of.
 */
export async function listKeysOfVisibleProjects(sql: Queryable, userId: string | null, options: { includeDeleted?: boolean } = {}): Promise<StoredKey[]> {
  const rows = await sql<KeyRow[]>`
    select ${sql.unsafe(COLUMNS.split(', ').map((c) => `k.${c}`).join(', '))}
    from api_keys k join projects p on p.id = k.project_id
    where p.deleted_at is null
      ${userId === null ? sql`` : sql`and exists (select 1 from project_members m where m.project_id = p.id and m.user_id = ${userId})`}
      ${options.includeDeleted ? sql`` : sql`and k.deleted_at is null`}
    order by k.project_id, k.created_at, k.id`;
  return rows.map(toStoredKey);
}

/** A key of this project, deleted or not; a key of another project is not found. */
export async function findKey(sql: Queryable, projectId: string, keyId: string): Promise<StoredKey | null> {
  const rows = await sql<KeyRow[]>`select ${sql.unsafe(COLUMNS)} from api_keys where id = ${keyId} and project_id = ${projectId}`;
  return rows[0] === undefined ? null : toStoredKey(rows[0]);
}

/** True when this call deleted the key (false: it was already deleted); its running batches become cancelling. */
export async function markKeyDeleted(sql: Queryable, projectId: string, keyId: string): Promise<boolean> {
  const rows = await sql`
    update api_keys set deleted_at = now()
    where id = ${keyId} and project_id = ${projectId} and deleted_at is null returning id`;
  if (rows.length === 0) return false;
  // In the caller's transaction, with the deletion: no batch keeps running on a key that is gone.
  await cancelBatchesOfDeletedKeys(sql, { keyId });
  return true;
}

/** Whether the key is live: not deleted, and neither is its project. */
export async function isKeyLive(sql: Queryable, keyId: string): Promise<boolean> {
  const rows = await sql`
    select 1 from api_keys k join projects p on p.id = k.project_id
    where k.id = ${keyId} and k.deleted_at is null and p.deleted_at is null`;
  return rows.length > 0;
}
