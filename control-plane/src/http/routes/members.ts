import type { FastifyInstance } from 'fastify';
import { Errors } from '@gateway/shared';
import { can, type ProjectRole } from '../../auth/permissions.js';
import { principalOf } from '../../auth/require-auth.js';
import type { AppContext } from '../../context.js';
import { writeAudit } from '../../db/audit-writer.js';
import type { Queryable } from '../../db/connect.js';
import { countOwners, findMemberRole, listMembers, removeMember, upsertMember } from '../../db/members.js';
import { projectNamedLike } from '../../db/projects.js';
import { findUserByEmail, findUserById } from '../../db/users.js';
import { memberBody } from '../account-schemas.js';
import { forbidden, projectAccess } from '../project-access.js';
import { refuseTakenName } from '../project-names.js';
import { requestFacts } from '../request-facts.js';
import { ERROR_RESPONSES, listOf, projectParams, ref, uuidSchema } from '../schemas.js';

/**
 * Project members. Project admins add, re-role and remove members; only owners (and account
 * admins) grant, change or take away the owner role; anyone may leave; a project always keeps at
 * least one owner. Changes to one project's membership are serialised by a row lock on the
 * project, so two concurrent demotions cannot leave it ownerless.
 */
interface MemberBody {
  user_id?: string;
  email?: string;
  role: ProjectRole;
}

const memberParams = {
  type: 'object',
  required: ['id', 'user_id'],
  additionalProperties: false,
  properties: { id: { ...uuidSchema, description: 'Project id.' }, user_id: { ...uuidSchema, description: 'User id.' } },
} as const;

export function registerMemberRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get<{ Params: { id: string } }>(
    '/v1/projects/:id/members',
    { schema: { tags: ['projects'], summary: "The project's members", params: projectParams, response: { 200: listOf('Member'), ...ERROR_RESPONSES } } },
    async (req) => {
      await projectAccess(ctx.sql, principalOf(req), req.params.id, 'project.read', 'read this project');
      return { data: await listMembers(ctx.sql, req.params.id) };
    },
  );

  app.post<{ Params: { id: string }; Body: MemberBody }>(
    '/v1/projects/:id/members',
    {
      config: { auditType: 'member.added' },
      schema: {
        tags: ['projects'],
        summary: "Add a member, or change a member's role (project admins and owners)",
        description:
          'Name the account by `user_id` or by `email` (any case), exactly one of them; an unknown one gets 404. ' +
          '201 when the user was added, 200 when an existing member got the new role.',
        params: projectParams,
        body: memberBody,
        response: { 200: ref('Member'), 201: ref('Member'), ...ERROR_RESPONSES },
      },
    },
    async (req, reply) => {
      const principal = principalOf(req);
      const { role } = req.body;
      const result = await ctx.sql.begin(async (tx) => {
        const access = await projectAccess(tx, principal, req.params.id, 'member.manage', 'manage members', { lock: 'update' });
        const userId = await memberToAdd(tx, req.body);
        const current = await findMemberRole(tx, req.params.id, userId);
        if ((role === 'owner' || current === 'owner') && !can(access.role, 'member.manage_owners')) throw forbidden(access.role, 'grant or change the owner role');
        if (current === 'owner' && role !== 'owner') await keepAnOwner(tx, req.params.id);
        // A new owner must not already own a project of this name (names are unique per account).
        if (role === 'owner' && current !== 'owner') refuseTakenName(await projectNamedLike(tx, access.project.name, [userId], req.params.id), 'the new owner');
        const upserted = await upsertMember(tx, req.params.id, userId, role);
        await writeAudit(
          tx,
          { type: upserted.created ? 'member.added' : 'member.updated', outcome: 'success', status: upserted.created ? 201 : 200, projectId: req.params.id, actor: principal.userId, target: { type: 'member', id: userId } },
          requestFacts(req, reply),
        );
        return upserted;
      });
      return reply.status(result.created ? 201 : 200).send(result.member);
    },
  );

  app.delete<{ Params: { id: string; user_id: string } }>(
    '/v1/projects/:id/members/:user_id',
    {
      config: { auditType: 'member.removed' },
      schema: {
        tags: ['projects'],
        summary: 'Remove a member (project admins and owners), or leave a project (anyone)',
        params: memberParams,
        response: { 204: { type: 'null', description: 'Removed.' }, ...ERROR_RESPONSES },
      },
    },
    async (req, reply) => {
      const principal = principalOf(req);
      const leaving = req.params.user_id === principal.userId;
      await ctx.sql.begin(async (tx) => {
        const access = await projectAccess(tx, principal, req.params.id, leaving ? 'project.read' : 'member.manage', 'manage members', { lock: 'update' });
        const current = await findMemberRole(tx, req.params.id, req.params.user_id);
        if (current === null) throw Errors.notAMember();
        if (current === 'owner' && !leaving && !can(access.role, 'member.manage_owners')) throw forbidden(access.role, 'remove an owner');
        if (current === 'owner') await keepAnOwner(tx, req.params.id);
        await removeMember(tx, req.params.id, req.params.user_id);
        await writeAudit(tx, { type: 'member.removed', outcome: 'success', status: 204, projectId: req.params.id, actor: principal.userId, target: { type: 'member', id: req.params.user_id } }, requestFacts(req, reply));
      });
      return reply.status(204).send();
    },
  );
}

/** The id of the account the body names by user_id or email; 400 unless exactly one is given, 404 when unknown. */
async function memberToAdd(sql: Queryable, body: MemberBody): Promise<string> {
  if ((body.user_id === undefined) === (body.email === undefined)) {
    throw Errors.memberTargetAmbiguous(body.user_id === undefined ? 'user_id' : 'email');
  }
  if (body.user_id !== undefined) {
    if ((await findUserById(sql, body.user_id)) === null) throw Errors.noSuchUser();
    return body.user_id;
  }
  const user = await findUserByEmail(sql, body.email as string);
  if (user === null) throw Errors.noAccountWithEmail();
  return user.id;
}

/** Refuses a change that would take the project's last owner away. */
async function keepAnOwner(sql: Queryable, projectId: string): Promise<void> {
  if ((await countOwners(sql, projectId)) <= 1) {
    throw Errors.lastProjectOwner();
  }
}
