import type { Member } from '@gateway/shared';
import type { ProjectRole } from '../auth/permissions.js';
import { one, type Queryable } from './connect.js';

/** Project membership: who belongs to a project and with which project role. */
interface MemberRow {
  user_id: string;
  email: string;
  role: ProjectRole;
  created_at: Date;
}

/** As the API shows it: declared once, in shared (management-api/types.ts). */
export type { Member };

function toMember(projectId: string, row: MemberRow): Member {
  return { project_id: projectId, user_id: row.user_id, email: row.email, role: row.role, created_at: row.created_at.toISOString() };
}

export async function listMembers(sql: Queryable, projectId: string): Promise<Member[]> {
  const rows = await sql<MemberRow[]>`
    select m.user_id, u.email, m.role, m.created_at
    from project_members m join users u on u.id = m.user_id
    where m.project_id = ${projectId}
    order by m.created_at, m.user_id`;
  return rows.map((r) => toMember(projectId, r));
}

export async function findMemberRole(sql: Queryable, projectId: string, userId: string): Promise<ProjectRole | null> {
  const rows = await sql<{ role: ProjectRole }[]>`select role from project_members where project_id = ${projectId} and user_id = ${userId}`;
  return rows[0]?.role ?? null;
}

export async function countOwners(sql: Queryable, projectId: string): Promise<number> {
  const row = one(await sql<{ n: number }[]>`select count(*)::int as n from project_members where project_id = ${projectId} and role = 'owner'`);
  return row.n;
}

/** Adds the member or changes its role; `created` tells which. */
export async function upsertMember(
  sql: Queryable,
  projectId: string,
  userId: string,
  role: ProjectRole,
): Promise<{ member: Member; created: boolean }> {
  const row = one(await sql<(MemberRow & { created: boolean })[]>`
    with upserted as (
      insert into project_members (project_id, user_id, role) values (${projectId}, ${userId}, ${role})
      on conflict (project_id, user_id) do update set role = excluded.role
      returning user_id, role, created_at, (xmax = 0) as created
    )
    select upserted.user_id, u.email, upserted.role, upserted.created_at, upserted.created
    from upserted join users u on u.id = upserted.user_id`);
  return { member: toMember(projectId, row), created: row.created };
}

export async function removeMember(sql: Queryable, projectId: string, userId: string): Promise<boolean> {
  const rows = await sql`delete from project_members where project_id = ${projectId} and user_id = ${userId} returning user_id`;
  return rows.length > 0;
}
