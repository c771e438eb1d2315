import type { FastifyInstance } from 'fastify';
import { GatewayError } from '@gateway/shared';
import { hashPassword } from '../../auth/passwords.js';
import type { AccountRole } from '../../auth/permissions.js';
import { principalOf } from '../../auth/require-auth.js';
import type { AppContext } from '../../context.js';
import { writeAudit } from '../../db/audit-writer.js';
import { findUserById, insertUser, toUser } from '../../db/users.js';
import { requestFacts } from '../request-facts.js';
import { ERROR_RESPONSES, ref } from '../schemas.js';

/** Accounts: account admins create them; anyone signed in can read their own. */
interface NewUserBody {
  email: string;
  password: string;
  role: AccountRole;
}

/** Long enough to resist guessing with the sign-in throttle in front; the upper bound only stops abuse. */
const MIN_PASSWORD = 8;

export function registerUserRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.post<{ Body: NewUserBody }>(
    '/v1/users',
    {
      config: { auditType: 'user.created' },
      schema: {
        tags: ['users'],
        summary: 'Create an account (account admins only)',
        body: {
          type: 'object',
          required: ['email', 'password'],
          additionalProperties: false,
          properties: {
            email: { type: 'string', format: 'email', maxLength: 254 },
            password: { type: 'string', minLength: MIN_PASSWORD, maxLength: 1024 },
            role: { type: 'string', enum: ['admin', 'member'], default: 'member' },
          },
        },
        response: { 201: ref('User'), ...ERROR_RESPONSES },
      },
    },
    async (req, reply) => {
      const principal = principalOf(req);
      if (principal.role !== 'admin') throw new GatewayError('FORBIDDEN', 'Only account admins create accounts.');
      const passwordHash = await hashPassword(req.body.password);
      const user = await ctx.sql.begin(async (tx) => {
        const row = await insertUser(tx, { email: req.body.email.trim(), passwordHash, role: req.body.role });
        if (row === null) return null;
        await writeAudit(tx, { type: 'user.created', outcome: 'success', status: 201, actor: principal.userId }, requestFacts(req, reply));
        return row;
      });
      if (user === null) throw new GatewayError('CONFLICT', 'An account with this email already exists.', { param: 'email' });
      return reply.status(201).send(toUser(user));
    },
  );

  app.get(
    '/v1/users/me',
    { schema: { tags: ['users'], summary: 'The signed-in account', response: { 200: ref('User'), ...ERROR_RESPONSES } } },
    async (req) => {
      const user = await findUserById(ctx.sql, principalOf(req).userId);
      if (user === null) throw new GatewayError('UNAUTHORIZED');
      return toUser(user);
    },
  );
}
