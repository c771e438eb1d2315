import type { Queryable } from './connect.js';

/** The current refresh token of each cookie session (see migration 0007). */
export async function recordRefreshToken(sql: Queryable, row: { sessionId: string; userId: string; tokenId: string; expiresAt: Date }): Promise<void> {
  await sql`
    insert into session_refresh_tokens (session_id, user_id, token_id, expires_at)
    values (${row.sessionId}, ${row.userId}, ${row.tokenId}, ${row.expiresAt})`;
  // Housekeeping rides on the sign-in: rows past their session's end protect nothing.
  await sql`delete from session_refresh_tokens where expires_at < now()`;
}

export type Rotation = 'rotated' | 'reused';

/**
 * Replaces the session's current refresh token `usedId` by `nextId`, atomically: of two requests
 * presenting the same token, one rotates and the other finds it used. A session without a row
 * (its cookie predates rotation) is rotated from here on.
 */
export async function rotateRefreshToken(
  sql: Queryable,
  row: { sessionId: string; userId: string; usedId: string; nextId: string; expiresAt: Date },
): Promise<Rotation> {
  const updated = await sql`
    update session_refresh_tokens set token_id = ${row.nextId}
    where session_id = ${row.sessionId} and token_id = ${row.usedId}
    returning session_id`;
  if (updated.length > 0) return 'rotated';
  const inserted = await sql`
    insert into session_refresh_tokens (session_id, user_id, token_id, expires_at)
    values (${row.sessionId}, ${row.userId}, ${row.nextId}, ${row.expiresAt})
    on conflict (session_id) do nothing
    returning session_id`;
  return inserted.length > 0 ? 'rotated' : 'reused';
}
