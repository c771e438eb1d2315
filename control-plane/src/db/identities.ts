import type { Queryable } from './connect.js';

/**
 * Which account each single sign-on identity (issuer + subject) is bound to (see migration 0017).
 * The primary key and the unique (user_id, issuer) index decide every race: a binding is made by
 * an insert that either wins or changes nothing.
 */
export interface IdentityKey {
  issuer: string;
  subject: string;
}

/**
 * The account this identity is bound to, or null; records the sign-in (its time and the email the
 * provider sent this time, which is kept as a record and changes nothing else).
 */
export async function touchBoundIdentity(sql: Queryable, key: IdentityKey, email: string): Promise<string | null> {
  const rows = await sql<{ user_id: string }[]>`
    update user_identities set last_email = ${email}, last_seen_at = now()
    where issuer = ${key.issuer} and subject = ${key.subject}
    returning user_id`;
  return rows[0]?.user_id ?? null;
}

/** The account this identity is bound to, or null; changes nothing. */
export async function userOfIdentity(sql: Queryable, key: IdentityKey): Promise<string | null> {
  const rows = await sql<{ user_id: string }[]>`
    select user_id from user_identities where issuer = ${key.issuer} and subject = ${key.subject}`;
  return rows[0]?.user_id ?? null;
}

/** The subject of this issuer the account is bound to, or null. */
export async function subjectOfUser(sql: Queryable, issuer: string, userId: string): Promise<string | null> {
  const rows = await sql<{ subject: string }[]>`
    select subject from user_identities where issuer = ${issuer} and user_id = ${userId}`;
  return rows[0]?.subject ?? null;
}

/**
 * Binds the identity to the account. False when either is already bound (the identity to any
 * account, or the account to another subject of this issuer): nothing is changed then.
 */
export async function bindIdentity(sql: Queryable, key: IdentityKey, userId: string, email: string): Promise<boolean> {
  const rows = await sql`
    insert into user_identities (issuer, subject, user_id, email_at_link, last_email)
    values (${key.issuer}, ${key.subject}, ${userId}, ${email}, ${email})
    on conflict do nothing
    returning subject`;
  return rows.length > 0;
}

/** Removes every binding of the account; returns how many it had. */
export async function unbindUser(sql: Queryable, userId: string): Promise<number> {
  const rows = await sql`delete from user_identities where user_id = ${userId} returning subject`;
  return rows.length;
}
