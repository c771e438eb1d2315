import type { FastifyInstance } from 'fastify';
import { clearRefreshCookie } from '../../auth/refresh-cookie.js';
import { principalOf } from '../../auth/require-auth.js';
import { signOutSession } from '../../auth/session-signouts.js';
import type { AppContext } from '../../context.js';
import { writeAudit } from '../../db/audit-writer.js';
import { noContent } from '../account-schemas.js';
import { requestFacts } from '../request-facts.js';
import { ERROR_RESPONSES } from '../schemas.js';

/** POST /v1/signouts: ends the session of the bearer token, so neither it nor any refresh of it works again. */
export function registerSignoutRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.post(
    '/v1/signouts',
    {
      config: { auditType: 'signout' },
      schema: {
        tags: ['auth'],
        summary: 'Sign out: end the session of the bearer token',
        description:
          'The token, every token refreshed from the same sign-in, and any later refresh get 401 UNAUTHORIZED. Other sessions of the account are untouched. ' +
          "No body. The answer also clears the dashboard's session cookie (Max-Age=0).",
        response: { 204: noContent('Signed out.'), ...ERROR_RESPONSES },
      },
    },
    async (req, reply) => {
      const principal = principalOf(req);
      await ctx.sql.begin(async (tx) => {
        await writeAudit(tx, { type: 'signout', outcome: 'success', status: 204, actor: principal.userId }, requestFacts(req, reply));
        await signOutSession(ctx, tx, principal.userId, principal.token);
      });
      clearRefreshCookie(req, reply, ctx.config.trustProxy);
      return reply.status(204).send();
    },
  );
}
