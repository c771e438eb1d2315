import { newRecordId } from '@gateway/shared';
import { afterInstant } from './auth/require-auth.js';
import { hashPassword } from './auth/passwords.js';
import type { Db } from './db/connect.js';
import { writeAudit, type RequestFacts } from './db/audit-writer.js';
import { bindIdentity, subjectOfUser, unbindUser, userOfIdentity } from './db/identities.js';
import { findUserByEmail, findUserById, insertUser, markBreakGlass, updateUser } from './db/users.js';

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

/**
 * Removes the account's single sign-on bindings, for a person whose identity at the provider was
 * replaced (a new subject) or an account linked to the wrong identity; the next single sign-on
 * whose verified email is the account's links it again. Its sessions end, since they may be the
 * wrong identity's. Returns how many bindings it had.
 */
export async function unlinkSso(sql: Db, email: string): Promise<{ unlinked: number }> {
  const now = Date.now();
  const result = await sql.begin(async (tx) => {
    const user = await findUserByEmail(tx, email);
    if (user === null) throw new RecoveryError(`no account has the email ${email}`);
    const unlinked = await unbindUser(tx, user.id);
    if (unlinked > 0) {
      await updateUser(tx, user.id, { tokensValidAfter: new Date(now) });
      await writeAudit(tx, { type: 'user.updated', outcome: 'success', status: 200, target: { type: 'user', id: user.id } }, localAdminFacts('unlink-sso'));
    }
    return { unlinked };
  });
  if (result.unlinked > 0) await afterInstant(now);
  return result;
}

/**
 * Binds the account to a single sign-on identity chosen by the operator: for a provider that does
 * not say it verified emails (Entra ID), whose people cannot link an existing account themselves.
 * The issuer and subject are those the control plane logs when it refuses to link an identity to
 * the account of its email. Returns false when that binding already existed.
 */
export async function linkSso(sql: Db, email: string, identity: { issuer: string; subject: string }): Promise<{ linked: boolean }> {
  return sql.begin(async (tx) => {
    const user = await findUserByEmail(tx, email);
    if (user === null) throw new RecoveryError(`no account has the email ${email}`);
    if (await bindIdentity(tx, identity, user.id, user.email)) {
      await writeAudit(tx, { type: 'user.updated', outcome: 'success', status: 200, target: { type: 'user', id: user.id } }, localAdminFacts('link-sso'));
      return { linked: true };
    }
    const holder = await userOfIdentity(tx, identity);
    if (holder === user.id) return { linked: false };
    if (holder !== null) {
      const other = await findUserById(tx, holder);
      throw new RecoveryError(`that identity is linked to the account ${other?.email ?? holder}; run unlink-sso on it first`);
    }
    const bound = await subjectOfUser(tx, identity.issuer, user.id);
    throw new RecoveryError(`${email} is linked to another identity of ${identity.issuer} (subject ${bound ?? '?'}); run unlink-sso on it first`);
  });
}
