import { Errors } from '@gateway/shared';
import type { Db, Queryable } from '../db/connect.js';
import { bindIdentity, subjectOfUser, touchBoundIdentity } from '../db/identities.js';
import { findUserByEmail, findUserById, insertUser, type UserRow } from '../db/users.js';
import type { AccountRole } from './permissions.js';
import { NO_PASSWORD_HASH } from './passwords.js';
import type { OidcIdentity } from './oidc.js';

/**
 * Which account a single sign-on identity reaches. Accounts are bound to the provider's issuer and
 * subject, which it never gives to anyone else; the email claim, which many providers let a
 * person (or the admin of any tenant) set to anything, is only used to find an account the first
 * time, and only when the provider says it verified it:
 *
 * 1. an identity already bound reaches its account, whatever email it carries now;
 * 2. otherwise an account of that email is linked when the email is verified and the account is
 *    not bound to another subject of this issuer, and refused otherwise;
 * 3. otherwise a new account is made, bound to the identity.
 *
 * Disabled accounts are for the caller to refuse; a disabled account is never linked.
 */
export type SsoAccount =
  | { outcome: 'bound' | 'linked' | 'created' | 'disabled'; user: UserRow }
  | { outcome: 'refused'; reason: 'unverified' | 'taken'; message: string; user: UserRow | null };

export interface NewAccount {
  role: AccountRole;
  /** Runs in the transaction that creates the account (its audit event commits with it). */
  created(tx: Queryable, user: UserRow): Promise<void>;
}

/** Another sign-in bound the identity or made the account between this one's read and its write. */
class Raced extends Error {}

const ATTEMPTS = 3;

export async function accountForIdentity(sql: Db, identity: OidcIdentity, newAccount: NewAccount): Promise<SsoAccount> {
  for (let attempt = 1; ; attempt++) {
    const boundId = await touchBoundIdentity(sql, identity, identity.email);
    if (boundId !== null) {
      const user = await findUserById(sql, boundId);
      // The binding cascades with its account, so it cannot outlive it.
      if (user === null) throw Errors.identityAccountUnreadable();
      return { outcome: 'bound', user };
    }
    try {
      return await sql.begin((tx) => linkOrCreate(tx, identity, newAccount));
    } catch (err) {
      // The next attempt sees what the other sign-in committed (usually: this identity, bound).
      if (!(err instanceof Raced) || attempt === ATTEMPTS) throw err;
    }
  }
}

async function linkOrCreate(tx: Queryable, identity: OidcIdentity, newAccount: NewAccount): Promise<SsoAccount> {
  const { email, issuer } = identity;
  const existing = await findUserByEmail(tx, email);
  if (existing === null) {
    if (identity.emailVerified === false) {
      return { outcome: 'refused', reason: 'unverified', user: null, message: `The identity provider has not verified ${email}; verify it there and sign in again.` };
    }
    const user = await insertUser(tx, { email, passwordHash: NO_PASSWORD_HASH, role: newAccount.role });
    if (user === null) throw new Raced();
    if (!(await bindIdentity(tx, identity, user.id, email))) throw new Raced();
    await newAccount.created(tx, user);
    return { outcome: 'created', user };
  }
  // Checked first: an unverified email learns no more of the account (bound, disabled) than that it exists.
  if (identity.emailVerified !== true) {
    return {
      outcome: 'refused',
      reason: 'unverified',
      user: existing,
      message:
        `The identity provider has not verified ${email}, and an account of that email exists here: single sign-on links an account ` +
        'only to an email the provider has verified. Verify it at the provider and sign in again, or ask an account admin.',
    };
  }
  const boundTo = await subjectOfUser(tx, issuer, existing.id);
  // This very identity, bound by a sign-in that committed after this one looked (another tab).
  if (boundTo === identity.subject) throw new Raced();
  if (boundTo !== null) {
    return {
      outcome: 'refused',
      reason: 'taken',
      user: existing,
      message: `The account of ${email} is linked to another identity at this identity provider; ask an account admin.`,
    };
  }
  if (existing.disabled) return { outcome: 'disabled', user: existing };
  // False: this identity, or the account, was bound meanwhile; the next attempt reads which.
  if (!(await bindIdentity(tx, identity, existing.id, email))) throw new Raced();
  return { outcome: 'linked', user: existing };
}
