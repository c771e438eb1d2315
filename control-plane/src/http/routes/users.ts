import type { FastifyInstance } from 'fastify';
import { Errors } from '@gateway/shared';
import { hashPassword } from '../../auth/passwords.js';
import { checkPassword } from '../../auth/password-policy.js';
import type { AccountRole } from '../../auth/permissions.js';
import { afterInstant, principalOf, requireAccountAdmin } from '../../auth/require-auth.js';
import type { AppContext } from '../../context.js';
import { writeAudit, type ManagementEvent } from '../../db/audit-writer.js';
import { findUserById, insertUser, listUsers, lockEnabledAdmins, toUser, updateUser, type User, type UserChange } from '../../db/users.js';
import { newUserBody, userListQuery, userParams, userPatchBody } from '../account-schemas.js';
import { requestFacts } from '../request-facts.js';
import { ERROR_RESPONSES, pageOf, ref } from '../schemas.js';
import { registerPasswordRoutes } from './passwords.js';
import { registerSignoutRoutes } from './signouts.js';

/**
 * Accounts: account admins create, list, re-role and disable them; anyone signed in reads their
 * own. The installation always keeps one enabled account admin. Also registers the password and
 * sign-out routes, which live in the same authenticated scope.
 */
interface NewUserBody {
  email: string;
  password: string;
  role: AccountRole;
}

interface UserListQuery {
  email?: string;
  limit: number;
  cursor?: string;
}

interface UserPatch {
  role?: AccountRole;
  disabled?: boolean;
}

export function registerUserRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.post<{ Body: NewUserBody }>(
    '/v1/users',
    {
      config: { auditType: 'user.created' },
      schema: {
        tags: ['users'],
        summary: 'Create an account (account admins only)',
        body: newUserBody,
        response: { 201: ref('User'), ...ERROR_RESPONSES },
      },
    },
    async (req, reply) => {
      const principal = requireAccountAdmin(req, 'create accounts');
      const email = req.body.email.trim();
      checkPassword(req.body.password, email, 'password');
      const passwordHash = await hashPassword(req.body.password);
      const user = await ctx.sql.begin(async (tx) => {
        const row = await insertUser(tx, { email, passwordHash, role: req.body.role });
        if (row === null) return null;
        await writeAudit(tx, { type: 'user.created', outcome: 'success', status: 201, actor: principal.userId, target: { type: 'user', id: row.id } }, requestFacts(req, reply));
        return row;
      });
      if (user === null) throw Errors.emailTaken();
      return reply.status(201).send(toUser(user));
    },
  );

  app.get<{ Querystring: UserListQuery }>(
    '/v1/users',
    {
      schema: {
        tags: ['users'],
        summary: 'List accounts, oldest first (account admins only)',
        description: 'Keyset-paged like the record lists: follow `next_cursor` while `has_more`. `email` filters by a case-insensitive substring.',
        querystring: userListQuery,
        response: { 200: pageOf('User'), ...ERROR_RESPONSES },
      },
    },
    async (req) => {
      requireAccountAdmin(req, 'list accounts');
      const { email, limit, cursor } = req.query;
      const after = cursor === undefined ? null : ctx.cursors.decode(cursor, 'users', 'asc');
      const rows = await listUsers(ctx.sql, { email, fetch: limit + 1, after });
      const hasMore = rows.length > limit;
      const page = hasMore ? rows.slice(0, limit) : rows;
      const last = page[page.length - 1];
      return {
        data: page.map(toUser),
        next_cursor: hasMore && last !== undefined ? ctx.cursors.encode('users', 'asc', { ts: last.created_at.getTime(), id: last.id }) : null,
        has_more: hasMore,
      };
    },
  );

  app.get(
    '/v1/users/me',
    { schema: { tags: ['users'], summary: 'The signed-in account', response: { 200: ref('User'), ...ERROR_RESPONSES } } },
    // The row authentication just read: no second query.
    async (req) => principalOf(req).user,
  );

  app.patch<{ Params: { user_id: string }; Body: UserPatch }>(
    '/v1/users/:user_id',
    {
      config: { auditType: 'user.updated' },
      schema: {
        tags: ['users'],
        summary: "Change an account's role, or disable / enable it (account admins only)",
        description:
          'Disabling ends every session of the account at once (its tokens get 401, refresh included) and refuses its sign-ins. ' +
          'A change that would leave no enabled account admin (disabling or demoting the last one) gets 409 CONFLICT.',
        params: userParams,
        body: userPatchBody,
        response: { 200: ref('User'), ...ERROR_RESPONSES },
      },
    },
    async (req, reply) => {
      const admin = requireAccountAdmin(req, 'change accounts');
      const userId = req.params.user_id;
      const now = Date.now();
      const { user, disabledNow } = await ctx.sql.begin(async (tx) => {
        if (req.body.role === 'member' || req.body.disabled === true) {
          const admins = await lockEnabledAdmins(tx);
          if (admins.length === 1 && admins[0] === userId) {
            throw Errors.lastAccountAdmin();
          }
        }
        const current = await findUserById(tx, userId);
        if (current === null) throw Errors.noSuchUser();
        const change: UserChange = {};
        const events: string[] = [];
        if (req.body.role !== undefined && req.body.role !== current.role) {
          change.role = req.body.role;
          events.push('user.updated');
        }
        if (req.body.disabled !== undefined && req.body.disabled !== current.disabled) {
          change.disabled = req.body.disabled;
          // Disabling ends the sessions for good: enabling again does not revive them.
          if (req.body.disabled) change.tokensValidAfter = new Date(now);
          events.push(req.body.disabled ? 'user.disabled' : 'user.enabled');
        }
        const updated = (await updateUser(tx, userId, change)) ?? current;
        // A change to nothing is still an admin's action on the account.
        const facts = requestFacts(req, reply);
        for (const type of events.length === 0 ? ['user.updated'] : events) {
          const event: ManagementEvent = { type, outcome: 'success', status: 200, actor: admin.userId, target: { type: 'user', id: userId } };
          await writeAudit(tx, event, facts);
        }
        return { user: toUser(updated), disabledNow: change.tokensValidAfter !== undefined };
      });
      if (disabledNow) await afterInstant(now);
      return user satisfies User;
    },
  );

  registerPasswordRoutes(app, ctx);
  registerSignoutRoutes(app, ctx);
}
