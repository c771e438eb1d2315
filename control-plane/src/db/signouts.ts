import type { Queryable } from './connect.js';

/** Signed-out sessions (see migration 0003): the durable copy of what Redis answers per request. */
export async function insertSignout(sql: Queryable, signout: { sessionId: string; userId: string; expiresAt: Date }): Promise<void> {
  await sql`
    insert into session_signouts (session_id, user_id, expires_at)
    values (${signout.sessionId}, ${signout.userId}, ${signout.expiresAt})
    on conflict (session_id) do update set expires_at = greatest(session_signouts.expires_at, excluded.expires_at)`;
  // Housekeeping rides on the rare write: rows past their expiry protect nothing.
  await sql`delete from session_signouts where expires_at < now()`;
}

export async function liveSignouts(sql: Queryable): Promise<{ session_id: string; expires_at: Date }[]> {
  return sql<{ session_id: string; expires_at: Date }[]>`select session_id, expires_at from session_signouts where expires_at > now()`;
}

export async function isSessionSignedOut(sql: Queryable, sessionId: string): Promise<boolean> {
  const rows = await sql`select 1 from session_signouts where session_id = ${sessionId} and expires_at > now()`;
  return rows.length > 0;
}
