import type { User } from '@gateway/shared';
import type { Fragment } from 'postgres';
import type { AccountRole } from '../auth/permissions.js';
import { one, type Queryable } from './connect.js';

/** Accounts. Emails are unique regardless of case (users_email_key is on lower(email)). */
export interface UserRow {
  id: string;
  email: string;
  role: AccountRole;
  disabled: boolean;
  /** Tokens of sessions begun at or before this instant are refused; null: none are. */
  tokens_valid_after: Date | null;
  created_at: Date;
}

/** As the API shows it: declared once, in shared (management-api/types.ts). */
export type { User };

export function toUser(row: UserRow): User {
  return { id: row.id, email: row.email, role: row.role, disabled: row.disabled, created_at: row.created_at.toISOString() };
}

/** Every column but the hash: what each query below returns. */
const COLUMNS = 'id, email, role, disabled, tokens_valid_after, created_at';

/** The read every authenticated request makes: the account, its role and whether its tokens still count. */
export async function findUserById(sql: Queryable, id: string): Promise<UserRow | null> {
  const rows = await sql<UserRow[]>`select ${sql.unsafe(COLUMNS)} from users where id = ${id}`;
  return rows[0] ?? null;
}

export async function findUserByEmail(sql: Queryable, email: string): Promise<UserRow | null> {
  const rows = await sql<UserRow[]>`select ${sql.unsafe(COLUMNS)} from users where lower(email) = lower(${email.trim()})`;
  return rows[0] ?? null;
}

export type SigninUser = UserRow & { password_hash: string; break_glass: boolean };

/**
 * One of the two queries that read a password hash (sign-in and a password change check it).
 * `normalised` is the email as the lookup compares it (PostgreSQL's lower()), which is what the
 * sign-in throttle counts by when no account matches: JavaScript's toLowerCase differs from it on
 * some characters (a dotted capital I), and a difference would let the same account be guessed
 * at under several spellings.
 */
export async function findUserForSignin(sql: Queryable, email: string): Promise<{ user: SigninUser | null; normalised: string }> {
  const rows = await sql<(SigninUser & { normalised: string })[]>`
    select lower(${email}) as normalised, u.*
    from (select 1) as one
    left join (select ${sql.unsafe(COLUMNS)}, password_hash, break_glass from users) u on lower(u.email) = lower(${email})`;
  const row = one(rows);
  const { normalised, ...user } = row;
  return { user: user.id === null ? null : (user as SigninUser), normalised };
}

/** Replaces a verified hash made at an older cost, unless the password changed meanwhile. */
export async function upgradePasswordHash(sql: Queryable, id: string, oldHash: string, newHash: string): Promise<void> {
  await sql`update users set password_hash = ${newHash} where id = ${id} and password_hash = ${oldHash}`;
}

/** A break-glass account signs in with its password even when PASSWORD_SIGNIN=false. */
export async function markBreakGlass(sql: Queryable, id: string): Promise<void> {
  await sql`update users set break_glass = true where id = ${id}`;
}

/** The other one: the hash of the signed-in account, to check its current password. */
export async function findPasswordHash(sql: Queryable, id: string): Promise<string | null> {
  const rows = await sql<{ password_hash: string }[]>`select password_hash from users where id = ${id}`;
  return rows[0]?.password_hash ?? null;
}

/** Null when the email is taken (the unique index decides, so two racing inserts cannot both win). */
export async function insertUser(sql: Queryable, user: { email: string; passwordHash: string; role: AccountRole }): Promise<UserRow | null> {
  const rows = await sql<UserRow[]>`
    insert into users (email, password_hash, role) values (${user.email}, ${user.passwordHash}, ${user.role})
    on conflict do nothing
    returning ${sql.unsafe(COLUMNS)}`;
  return rows.length === 0 ? null : one(rows);
}

export interface UserListQuery {
  /** Case-insensitive substring of the email. */
  email: string | undefined;
  /** Rows to fetch: the page size plus one, to tell whether more follow. */
  fetch: number;
  /** The last row of the previous page (created_at in Unix ms, which is the column's precision). */
  after: { ts: number; id: string } | null;
}

/** Oldest first, keyset-paged on (created_at, id). */
export async function listUsers(sql: Queryable, query: UserListQuery): Promise<UserRow[]> {
  const conditions: Fragment[] = [];
  // strpos rather than LIKE: the filter is plain text, with no wildcard characters to escape.
  if (query.email !== undefined) conditions.push(sql`strpos(lower(email), lower(${query.email})) > 0`);
  if (query.after !== null) conditions.push(sql`(created_at, id) > (${new Date(query.after.ts)}, ${query.after.id}::uuid)`);
  const where = conditions.length === 0 ? sql`` : sql`where ${conditions.reduce((all, c) => sql`${all} and ${c}`)}`;
  return sql<UserRow[]>`
    select ${sql.unsafe(COLUMNS)} from users ${where} order by created_at, id limit ${query.fetch}`;
}

/**
 * Takes a row lock on every enabled admin, in a fixed order: two transactions that each would
 * disable or demote an admin run one after the other, and the second sees the first's change, so
 * together they cannot leave the installation without an admin. Returns their ids.
 */
export async function lockEnabledAdmins(sql: Queryable): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`select id from users where role = 'admin' and not disabled order by id for update`;
  return rows.map((r) => r.id);
}

export interface UserChange {
  role?: AccountRole;
  disabled?: boolean;
  passwordHash?: string;
  /** Ends every session begun at or before this instant. */
  tokensValidAfter?: Date;
}

export async function updateUser(sql: Queryable, id: string, change: UserChange): Promise<UserRow | null> {
  const rows = await sql<UserRow[]>`
    update users set
      role = coalesce(${change.role ?? null}, role),
      disabled = coalesce(${change.disabled ?? null}::boolean, disabled),
      password_hash = coalesce(${change.passwordHash ?? null}, password_hash),
      -- greatest() skips a null and never moves the instant back.
      tokens_valid_after = greatest(${change.tokensValidAfter ?? null}::timestamptz, tokens_valid_after)
    where id = ${id}
    returning ${sql.unsafe(COLUMNS)}`;
  return rows[0] ?? null;
}
