import type { Project } from '@gateway/shared';
import { CACHE_OFF, DEFAULT_RESPONSES_TTL_DAYS, type CacheSetting, type McpSetting, type ProjectPolicy, type QuotaPeriod, type RateLimits, type ResponsesSetting, type UnsupportedParams } from '@gateway/shared';
import type { ProjectRole } from '../auth/permissions.js';
import type { JSONValue } from 'postgres';
import { cancelBatchesOfDeletedKeys } from './batches.js';
import { one, type Queryable } from './connect.js';

/** Projects. Deletion is soft (deleted_at) so records keep pointing at a project that existed. */
interface ProjectRow {
  id: string;
  name: string;
  quota_tokens: bigint | null;
  quota_period: QuotaPeriod;
  used_tokens: bigint;
  key_rpm: number | null;
  key_tpm: number | null;
  project_rpm: number | null;
  project_tpm: number | null;
  allowed_models: string[] | null;
  max_tokens_cap: number | null;
  mcp: McpSetting | null;
  max_n: number | null;
  cache: CacheSetting | null;
  model_aliases: Record<string, string> | null;
  unsupported_params: UnsupportedParams | null;
  responses_ttl_days: number | null;
  created_at: Date;
}

/** As the API shows it: declared once, in shared (management-api/types.ts). */
export type { Project };

/** The fields a project is created or changed with (the API's body, in its own names). */
export interface ProjectInput {
  name?: string;
  quota_tokens?: number | null;
  quota_period?: QuotaPeriod;
  rate_limits?: Partial<RateLimits>;
  allowed_models?: string[] | null;
  max_tokens_cap?: number | null;
  mcp?: McpSetting | null;
  max_n?: number | null;
  /** Null: back to the default (off). */
  cache?: CacheSetting | null;
  /** Null: none. */
  model_aliases?: Record<string, string> | null;
  /** Null: back to the default (drop). */
  unsupported_params?: UnsupportedParams | null;
  /** Null: back to the default (30 days). */
  responses?: ResponsesSetting | null;
}

const COLUMNS = 'id, name, quota_tokens, quota_period, used_tokens, key_rpm, key_tpm, project_rpm, project_tpm, allowed_models, max_tokens_cap, mcp, max_n, cache, model_aliases, unsupported_params, responses_ttl_days, created_at';
const P_COLUMNS = COLUMNS.split(', ').map((c) => `p.${c}`).join(', ');

function toProject(row: ProjectRow): Project {
  return {
    id: row.id,
    name: row.name,
    quota_tokens: row.quota_tokens === null ? null : Number(row.quota_tokens),
    quota_period: row.quota_period,
    used_tokens: Number(row.used_tokens),
    rate_limits: { key_rpm: row.key_rpm, key_tpm: row.key_tpm, project_rpm: row.project_rpm, project_tpm: row.project_tpm },
    allowed_models: row.allowed_models,
    max_tokens_cap: row.max_tokens_cap,
    mcp: row.mcp,
    cache: row.cache ?? { ...CACHE_OFF },
    // Always shown, the default when unset (as `cache` is).
    unsupported_params: row.unsupported_params ?? 'drop',
    // Always shown, the default when unset; applied by the control plane when a response is
    // stored, so not part of the policy the proxies read.
    responses: { ttl_days: row.responses_ttl_days ?? DEFAULT_RESPONSES_TTL_DAYS },
    created_at: row.created_at.toISOString(),
    // Shown only when set, as older answers had no such field.
    ...(row.max_n === null ? {} : { max_n: row.max_n }),
    ...(row.model_aliases === null ? {} : { model_aliases: row.model_aliases }),
  };
}

/** What the proxies enforce for this project (projected into Redis). */
export function policyOf(project: Project): Omit<ProjectPolicy, 'v'> {
  return {
    id: project.id,
    quota_tokens: project.quota_tokens,
    quota_period: project.quota_period,
    rate_limits: project.rate_limits,
    allowed_models: project.allowed_models,
    max_tokens_cap: project.max_tokens_cap,
    mcp: project.mcp,
    max_n: project.max_n ?? null,
    cache: project.cache,
    model_aliases: project.model_aliases ?? null,
    unsupported_params: project.unsupported_params ?? null,
  };
}

/** API field names → column values, for the fields present in `input`. */
function columnsOf(input: ProjectInput): Record<string, string | number | string[] | JSONValue | null> {
  const values: Record<string, string | number | string[] | JSONValue | null> = {};
  if (input.name !== undefined) values.name = input.name;
  if (input.quota_tokens !== undefined) values.quota_tokens = input.quota_tokens;
  if (input.quota_period !== undefined) values.quota_period = input.quota_period;
  if (input.allowed_models !== undefined) values.allowed_models = input.allowed_models;
  if (input.max_tokens_cap !== undefined) values.max_tokens_cap = input.max_tokens_cap;
  if (input.max_n !== undefined) values.max_n = input.max_n;
  if (input.unsupported_params !== undefined) values.unsupported_params = input.unsupported_params;
  if (input.responses !== undefined) values.responses_ttl_days = input.responses?.ttl_days ?? null;
  // postgres.js serialises it with the jsonb column's own serialiser.
  if (input.mcp !== undefined) values.mcp = input.mcp as JSONValue | null;
  if (input.cache !== undefined) values.cache = input.cache as JSONValue | null;
  if (input.model_aliases !== undefined) values.model_aliases = input.model_aliases as JSONValue | null;
  for (const [field, value] of Object.entries(input.rate_limits ?? {})) if (value !== undefined) values[field] = value as number | null;
  return values;
}

/** Creates the project with `ownerId` as its owner; run inside a transaction. */
export async function insertProject(sql: Queryable, input: ProjectInput & { name: string; ownerId: string }): Promise<Project> {
  const values = columnsOf(input);
  const row = one(await sql<ProjectRow[]>`
    insert into projects ${sql(values, Object.keys(values))}
    returning ${sql.unsafe(COLUMNS)}`);
  await sql`insert into project_members (project_id, user_id, role) values (${row.id}, ${input.ownerId}, 'owner')`;
  return toProject(row);
}

/**
 * Project names are unique per account, regardless of case: among the live projects an account
 * owns, no two share a name. ("Per account" is per owner: projects have no single owner column,
 * an account becomes owner by creating the project or being made one.) Run inside the transaction
 * that creates or renames: a per-account advisory lock, taken in id order, serialises two
 * creations racing for one name. Returns the project already holding the name, if any.
 */
export async function projectNamedLike(
  sql: Queryable,
  name: string,
  owners: readonly string[],
  except: string | null = null,
): Promise<{ id: string; name: string } | null> {
  const sorted = [...new Set(owners)].sort();
  for (const owner of sorted) await sql`select pg_advisory_xact_lock(hashtext('project-names'), hashtext(${owner}))`;
  if (sorted.length === 0) return null;
  const rows = await sql<{ id: string; name: string }[]>`
    select p.id, p.name from projects p
    join project_members m on m.project_id = p.id
    where m.user_id = any(${sorted}::uuid[]) and m.role = 'owner' and p.deleted_at is null
      and lower(p.name) = lower(${name}) ${except === null ? sql`` : sql`and p.id <> ${except}`}
    limit 1`;
  return rows[0] ?? null;
}

/** The accounts that own a project. */
export async function ownersOf(sql: Queryable, projectId: string): Promise<string[]> {
  const rows = await sql<{ user_id: string }[]>`select user_id from project_members where project_id = ${projectId} and role = 'owner'`;
  return rows.map((r) => r.user_id);
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
    select ${sql.unsafe(P_COLUMNS)},
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
          select ${sql.unsafe(P_COLUMNS)}
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

export async function updateProject(sql: Queryable, projectId: string, patch: ProjectInput): Promise<Project | null> {
  const values = columnsOf(patch);
  const rows = await sql<ProjectRow[]>`
    update projects set ${sql(values, Object.keys(values))}
    where id = ${projectId} and deleted_at is null
    returning ${sql.unsafe(COLUMNS)}`;
  return rows[0] === undefined ? null : toProject(rows[0]);
}

/**
 * Marks the project and its live keys deleted (their running batches cancelling), and deletes its stored responses (a soft delete
 * leaves the foreign key's cascade unused; nothing may continue a deleted project's
 * conversations). Returns the hashes of all the project's keys (the
 * projection removes whatever of them Redis still holds), or null when there was no live project.
 */
export async function softDeleteProject(sql: Queryable, projectId: string): Promise<{ keyHashes: string[] } | null> {
  const deleted = await sql`update projects set deleted_at = now() where id = ${projectId} and deleted_at is null returning id`;
  if (deleted.length === 0) return null;
  await sql`update api_keys set deleted_at = now() where project_id = ${projectId} and deleted_at is null`;
  await cancelBatchesOfDeletedKeys(sql, { projectId });
  await sql`delete from stored_responses where project_id = ${projectId}`;
  const keys = await sql<{ key_hash: string }[]>`select key_hash from api_keys where project_id = ${projectId}`;
  return { keyHashes: keys.map((k) => k.key_hash) };
}

/** Every live project, for the projection rebuild and the quota reconciler. */
export async function listLiveProjects(sql: Queryable): Promise<Project[]> {
  const rows = await sql<ProjectRow[]>`select ${sql.unsafe(COLUMNS)} from projects where deleted_at is null`;
  return rows.map(toProject);
}
