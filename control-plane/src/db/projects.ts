import type { ProjectRole } from '../auth/permissions.js';
import { one, type Queryable } from './connect.js';

/** Projects. Deletion is soft (deleted_at) so records keep pointing at a project that existed. */
interface ProjectRow {
  id: string;
  name: string;
  quota_tokens: bigint | null;
  used_tokens: bigint;
  created_at: Date;
}

export interface Project {
  id: string;
  name: string;
  /** Null: no quota. */
  quota_tokens: number | null;
  used_tokens: number;
  created_at: string;
}

const COLUMNS = 'id, name, quota_tokens, used_tokens, created_at';

function toProject(row: ProjectRow): Project {
  return {
    id: row.id,
    name: row.name,
    quota_tokens: row.quota_tokens === null ? null : Number(row.quota_tokens),
    used_tokens: Number(row.used_tokens),
    created_at: row.created_at.toISOString(),
  };
}

/** Creates the project with `ownerId` as its owner; run inside a transaction. */
export async function insertProject(sql: Queryable, input: { name: string; quotaTokens: number | null; ownerId: string }): Promise<Project> {
  const row = one(await sql<ProjectRow[]>`
    insert into projects (name, quota_tokens) values (${input.name}, ${input.quotaTokens})
    returning ${sql.unsafe(COLUMNS)}`);
  await sql`insert into project_members (project_id, user_id, role) values (${row.id}, ${input.ownerId}, 'owner')`;
  return toProject(row);
}

/**
 * A live project and the caller's role in it (null when not a member). Inside a transaction,
 * `lock: 'update'` serialises changes to one project's membership and its deletion; `lock: 'share'`
 * lets additions (a new key) run side by side but never alongside a deletion.
 */
export async function findProjectForUser(
  sql: Queryable,
  projectId: string,
  userId: string,
  options: { lock?: 'update' | 'share' } = {},
): Promise<{ project: Project; role: ProjectRole | null } | null> {
  const rows = await sql<(ProjectRow & { role: ProjectRole | null })[]>`
    select p.id, p.name, p.quota_tokens, p.used_tokens, p.created_at,
      (select m.role from project_members m where m.project_id = p.id and m.user_id = ${userId}) as role
    from projects p
    where p.id = ${projectId} and p.deleted_at is null
    ${options.lock === 'update' ? sql`for update of p` : options.lock === 'share' ? sql`for share of p` : sql``}`;
  const row = rows[0];
  return row === undefined ? null : { project: toProject(row), role: row.role };
}

/** Every live project (userId null, for account admins) or the live projects the user belongs to. */
export async function listProjects(sql: Queryable, userId: string | null): Promise<Project[]> {
  const rows =
    userId === null
      ? await sql<ProjectRow[]>`select ${sql.unsafe(COLUMNS)} from projects where deleted_at is null order by created_at, id`
      : await sql<ProjectRow[]>`
          select p.id, p.name, p.quota_tokens, p.used_tokens, p.created_at
          from project_members m join projects p on p.id = m.project_id
          where m.user_id = ${userId} and p.deleted_at is null
          order by p.created_at, p.id`;
  return rows.map(toProject);
}

/** Ids of the live projects a user belongs to: the scope of record lists for non-admins. */
export async function projectIdsOfUser(sql: Queryable, userId: string): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    select p.id from project_members m join projects p on p.id = m.project_id
    where m.user_id = ${userId} and p.deleted_at is null`;
  return rows.map((r) => r.id);
}

/** Whether a project with this id was ever created (deleted or not): account admins may read its records. */
export async function projectExists(sql: Queryable, projectId: string): Promise<boolean> {
  const rows = await sql`select 1 from projects where id = ${projectId}`;
  return rows.length > 0;
}

export async function updateProject(
  sql: Queryable,
  projectId: string,
  patch: { name?: string; quota_tokens?: number | null },
): Promise<Project | null> {
  const columns = (['name', 'quota_tokens'] as const).filter((c) => patch[c] !== undefined);
  const rows = await sql<ProjectRow[]>`
    update projects set ${sql(patch, columns)}
    where id = ${projectId} and deleted_at is null
    returning ${sql.unsafe(COLUMNS)}`;
  return rows[0] === undefined ? null : toProject(rows[0]);
}

/**
 * Marks the project and its live keys deleted. Returns the hashes of all the project's keys (the
 * projection removes whatever of them Redis still holds), or null when there was no live project.
 */
export async function softDeleteProject(sql: Queryable, projectId: string): Promise<{ keyHashes: string[] } | null> {
  const deleted = await sql`update projects set deleted_at = now() where id = ${projectId} and deleted_at is null returning id`;
  if (deleted.length === 0) return null;
  await sql`update api_keys set deleted_at = now() where project_id = ${projectId} and deleted_at is null`;
  const keys = await sql<{ key_hash: string }[]>`select key_hash from api_keys where project_id = ${projectId}`;
  return { keyHashes: keys.map((k) => k.key_hash) };
}
