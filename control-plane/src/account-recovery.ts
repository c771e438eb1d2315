import { newRecordId } from '@gateway/shared';
import { afterInstant } from './auth/require-auth.js';
import { hashPassword } from './auth/passwords.js';
import type { Db } from './db/connect.js';
import { writeAudit, type RequestFacts } from './db/audit-writer.js';
import { findUserByEmail, insertUser, markBreakGlass, updateUser } from './db/users.js';

/**
 * What `npm run admin` does, for an operator locked out of the management API: it works on the
 * database directly, so it needs no token, and audits as the local administrator (no user id;
 * the user agent says `local-admin`). Passwords arrive checked against the policy. The accounts it
 * creates or resets are break-glass accounts: they sign in with their password even where
 * PASSWORD_SIGNIN=false leaves everyone else to single sign-on.
 */
export class RecoveryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RecoveryError';
  }
}

function localAdminFacts(command: string): RequestFacts {
  return { requestId: `local-admin-${newRecordId()}`, clientIp: null, userAgent: `local-admin (npm run admin -- ${command})`, latencyMs: 0 };
}

/**
 * Sets the password of the account with this email, enables it, and ends every session it had.
 * Returns whether it had been disabled.
 */
export async function resetPassword(sql: Db, email: string, password: string): Promise<{ wasDisabled: boolean }> {
  const passwordHash = await hashPassword(password);
  const now = Date.now();
  const facts = localAdminFacts('reset-password');
  const result = await sql.begin(async (tx) => {
    const user = await findUserByEmail(tx, email);
    if (user === null) throw new RecoveryError(`no account has the email ${email}`);
    await updateUser(tx, user.id, { passwordHash, disabled: false, tokensValidAfter: new Date(now) });
    await markBreakGlass(tx, user.id);
    const target = { type: 'user', id: user.id } as const;
    await writeAudit(tx, { type: 'password.reset', outcome: 'success', status: 204, target }, facts);
    if (user.disabled) await writeAudit(tx, { type: 'user.enabled', outcome: 'success', status: 200, target }, facts);
    return { wasDisabled: user.disabled };
  });
  await afterInstant(now);
  return result;
}

/** Creates an account admin; refuses an email that already has an account. */
export async function createAdmin(sql: Db, email: string, password: string): Promise<{ id: string }> {
  const passwordHash = await hashPassword(password);
  return sql.begin(async (tx) => {
    const row = await insertUser(tx, { email, passwordHash, role: 'admin' });
    if (row === null) throw new RecoveryError(`an account with the email ${email} already exists; use reset-password`);
    await markBreakGlass(tx, row.id);
    await writeAudit(tx, { type: 'user.created', outcome: 'success', status: 201, target: { type: 'user', id: row.id } }, localAdminFacts('create-admin'));
    return { id: row.id };
  });
}
