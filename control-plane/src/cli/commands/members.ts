import type { List, Member } from '@gateway/shared';
import { arg, choice, type CommandSpec } from '../command.js';
import { MEMBER_COLUMNS } from '../columns.js';
import { isId, memberOf, projectIdOf } from '../resolve.js';

/** Who may do what in a project: viewer, member, admin, owner (see docs/management-api.md#members). */
const ROLES = ['viewer', 'member', 'admin', 'owner'] as const;

export const memberCommands: CommandSpec[] = [
  {
    path: ['members', 'list'],
    args: ['<project>'],
    summary: "A project's members and their roles",
    async run(ctx) {
      const api = await ctx.api();
      const answer = await api.get<List<Member>>(`/v1/projects/${await projectIdOf(api, arg(ctx, 0))}/members`);
      ctx.out.list(answer, answer.data, MEMBER_COLUMNS);
    },
  },
  {
    path: ['members', 'add'],
    args: ['<project>', '<email>'],
    summary: "Add an account (by email or user id) to a project, or change a member's role",
    options: { role: { type: 'string', value: '<viewer|member|admin|owner>', help: 'the role (default member)' } },
    async run(ctx) {
      const role = choice(ctx, 'role', ROLES) ?? 'member';
      const who = arg(ctx, 1);
      const api = await ctx.api();
      const projectId = await projectIdOf(api, arg(ctx, 0));
      const { status, body } = await api.send<Member>('POST', `/v1/projects/${projectId}/members`, { ...(isId(who) ? { user_id: who } : { email: who }), role });
      ctx.out.item(body, body, MEMBER_COLUMNS);
      ctx.out.note(status === 201 ? `Added ${body.email} as ${body.role}.` : `${body.email} is now ${body.role}.`);
    },
  },
  {
    path: ['members', 'remove'],
    args: ['<project>', '<email>'],
    summary: 'Remove a member (by email or user id); your own email leaves the project',
    async run(ctx) {
      const api = await ctx.api();
      const projectId = await projectIdOf(api, arg(ctx, 0));
      const member = await memberOf(api, projectId, arg(ctx, 1));
      await api.delete(`/v1/projects/${projectId}/members/${member.user_id}`);
      ctx.out.note(`Removed ${member.email} from the project.`);
    },
  },
];
