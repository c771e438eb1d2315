import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Errors, GatewayError, type AuditOutcome } from '@gateway/shared';
import { hashPassword, verifyPassword } from '../../auth/passwords.js';
import { checkPassword } from '../../auth/password-policy.js';
import { afterInstant, principalOf, requireAccountAdmin } from '../../auth/require-auth.js';
import type { AppContext } from '../../context.js';
import { writeAudit } from '../../db/audit-writer.js';
import { findPasswordHash, findUserById, updateUser } from '../../db/users.js';
import { noContent, ownPasswordBody, resetPasswordBody, userParams } from '../account-schemas.js';
import { requestFacts } from '../request-facts.js';
import { ERROR_RESPONSES } from '../schemas.js';

/**
 * Password changes. Either way the new password must meet the policy, and every session of the
 * account begun before the change ends with it (its tokens get 401, refresh included), the
 * caller's own included: sign in again with the new password. Changing one's own password proves
 * the current one first, and those proofs count toward the sign-in throttle, so this route is no
 * side door for guessing.
 */
interface OwnPasswordBody {
  current_password: string;
  new_password: string;
}

export function registerPasswordRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.post<{ Body: OwnPasswordBody }>(
    '/v1/users/me/password',
    {
      schema: {
        tags: ['users'],
        summary: 'Change your own password',
        description:
          'Every session of the account begun before the change ends (its tokens get 401, refresh included), this one too. ' +
          'A wrong current_password gets 403 FORBIDDEN and counts toward the sign-in throttle (429 RATE_LIMITED with Retry-After).',
        body: ownPasswordBody,
        response: { 204: noContent('Changed; sign in again with the new password.'), ...ERROR_RESPONSES },
      },
    },
    async (req, reply) => {
      try {
        await changeOwnPassword(ctx, req, reply);
      } catch (err) {
        if (err instanceof GatewayError) await auditOwnRefusal(ctx, req, reply, err);
        throw err;
      }
      return reply.status(204).send();
    },
  );

  app.post<{ Params: { user_id: string }; Body: { new_password: string } }>(
    '/v1/users/:user_id/password',
    {
      config: { auditType: 'password.reset' },
      schema: {
        tags: ['users'],
        summary: "Set another account's password (account admins only)",
        description: 'Every session of that account ends (its tokens get 401, refresh included).',
        params: userParams,
        body: resetPasswordBody,
        response: { 204: noContent('Set.'), ...ERROR_RESPONSES },
      },
    },
    async (req, reply) => {
      const admin = requireAccountAdmin(req, "set other accounts' passwords");
      const target = await findUserById(ctx.sql, req.params.user_id);
      if (target === null) throw Errors.noSuchUser();
      checkPassword(req.body.new_password, target.email, 'new_password');
      const passwordHash = await hashPassword(req.body.new_password);
      const now = Date.now();
      await ctx.sql.begin(async (tx) => {
        await updateUser(tx, target.id, { passwordHash, tokensValidAfter: new Date(now) });
        await writeAudit(tx, { type: 'password.reset', outcome: 'success', status: 204, actor: admin.userId, target: { type: 'user', id: target.id } }, requestFacts(req, reply));
      });
      await afterInstant(now);
      return reply.status(204).send();
    },
  );
}

async function changeOwnPassword(ctx: AppContext, req: FastifyRequest<{ Body: OwnPasswordBody }>, reply: FastifyReply): Promise<void> {
  const principal = principalOf(req);
  // The policy first: a new password that could never be accepted costs no attempt.
  checkPassword(req.body.new_password, principal.email, 'new_password');
  const verdict = await ctx.signinThrottle.attempt({ userId: principal.userId }, req.ip);
  if (!verdict.allowed) throw Errors.passwordThrottled(verdict.retryAfterSeconds);
  const stored = await findPasswordHash(ctx.sql, principal.userId);
  if (stored === null || !(await verifyPassword(req.body.current_password, stored))) {
    throw Errors.wrongPassword();
  }
  await ctx.signinThrottle.succeeded({ userId: principal.userId }, req.ip);
  const passwordHash = await hashPassword(req.body.new_password);
  const now = Date.now();
  await ctx.sql.begin(async (tx) => {
    await updateUser(tx, principal.userId, { passwordHash, tokensValidAfter: new Date(now) });
    await writeAudit(tx, { type: 'password.changed', outcome: 'success', status: 204, actor: principal.userId, target: { type: 'user', id: principal.userId } }, requestFacts(req, reply));
  });
  await afterInstant(now);
}

/** A refused change, audited like a refused sign-in: a wrong password is auth_failed, the throttle policy_blocked. */
async function auditOwnRefusal(ctx: AppContext, req: FastifyRequest, reply: FastifyReply, err: GatewayError): Promise<void> {
  const outcome: AuditOutcome = err.code === 'FORBIDDEN' ? 'auth_failed' : err.code === 'RATE_LIMITED' ? 'policy_blocked' : 'error';
  try {
    await writeAudit(
      ctx.sql,
      { type: 'password.changed', outcome, status: err.status, errorCode: err.code, actor: principalOf(req).userId },
      requestFacts(req, reply),
    );
  } catch (auditErr) {
    req.log.error({ err: { message: (auditErr as Error).message } }, 'could not audit a refused password change');
  }
}
