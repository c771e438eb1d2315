import type { AccountRole } from '../auth/permissions.js';
import { one, type Queryable } from './connect.js';

/** Accounts. Emails are unique regardless of case (users_email_key is on lower(email)). */
export interface UserRow {
  id: string;
  email: string;
  role: AccountRole;
  created_at: Date;
}

export interface User {
  id: string;
  email: string;
  role: AccountRole;
  created_at: string;
}

export function toUser(row: UserRow): User {
  return { id: row.id, email: row.email, role: row.role, created_at: row.created_at.toISOString() };
}

export async function findUserById(sql: Queryable, id: string): Promise<UserRow | null> {
  const rows = await sql<UserRow[]>`select id, email, role, created_at from users where id = ${id}`;
  return rows[0] ?? null;
}

/** The one query that reads a password hash; nothing else selects that column. */
export async function findUserForSignin(sql: Queryable, email: string): Promise<(UserRow & { password_hash: string }) | null> {
  const rows = await sql<(UserRow & { password_hash: string })[]>`
    select id, email, role, created_at, password_hash from users where lower(email) = lower(${email})`;
  return rows[0] ?? null;
}

/** Null when the email is taken (the unique index decides, so two racing inserts cannot both win). */
export async function insertUser(sql: Queryable, user: { email: string; passwordHash: string; role: AccountRole }): Promise<UserRow | null> {
  const rows = await sql<UserRow[]>`
    insert into users (email, password_hash, role) values (${user.email}, ${user.passwordHash}, ${user.role})
    on conflict do nothing
    returning id, email, role, created_at`;
  return rows.length === 0 ? null : one(rows);
}
