import type { User } from '@gateway/shared';
import { UsageError } from '../cli-errors.js';
import { arg, choice, flag, text, type CommandContext, type CommandSpec } from '../command.js';
import { USER_COLUMNS } from '../columns.js';
import { PAGING_OPTIONS, printPages, readPaging } from '../paging.js';
import { userIdOf } from '../resolve.js';

/** Accounts (account admins only). `<user>` is an email or an id. */
async function newPassword(ctx: CommandContext): Promise<string> {
  if (flag(ctx, 'password-stdin')) return ctx.term.readStdin();
  if (!ctx.term.stdinIsTTY) throw new UsageError('standard input is not a terminal: pipe the password in with --password-stdin');
  const password = await ctx.term.askHidden('Password for the new account: ');
  if ((await ctx.term.askHidden('Again: ')) !== password) throw new UsageError('the two passwords differ');
  return password;
}

async function setDisabled(ctx: CommandContext, disabled: boolean): Promise<void> {
  const api = await ctx.api();
  const user = await api.patch<User>(`/v1/users/${await userIdOf(api, arg(ctx, 0))}`, { disabled });
  ctx.out.item(user, user, USER_COLUMNS);
  ctx.out.note(disabled ? `Disabled ${user.email}: its sessions have ended and it cannot sign in.` : `Enabled ${user.email}: it may sign in again.`);
}

export const userCommands: CommandSpec[] = [
  {
    path: ['users', 'list'],
    summary: 'Accounts, oldest first',
    options: { email: { type: 'string', value: '<text>', help: 'only emails containing this text, any case' }, ...PAGING_OPTIONS },
    async run(ctx) {
      const paging = readPaging(ctx);
      await printPages(ctx, await ctx.api(), '/v1/users', { email: text(ctx, 'email') }, paging, USER_COLUMNS);
    },
  },
  {
    path: ['users', 'create'],
    args: ['<email>'],
    summary: 'Create an account; the password is asked (echo off) or read with --password-stdin',
    options: {
      role: { type: 'string', value: '<member|admin>', help: 'account role (default member)' },
      'password-stdin': { type: 'boolean', help: 'read the password from standard input' },
    },
    async run(ctx) {
      const role = choice(ctx, 'role', ['member', 'admin'] as const) ?? 'member';
      const password = await newPassword(ctx);
      const user = await (await ctx.api()).post<User>('/v1/users', { email: arg(ctx, 0), password, role });
      ctx.out.item(user, user, USER_COLUMNS);
      ctx.out.note(`Created ${user.role} account ${user.email}.`);
    },
  },
  {
    path: ['users', 'disable'],
    args: ['<user>'],
    summary: 'Disable an account: its sessions end at once and it cannot sign in',
    run: (ctx) => setDisabled(ctx, true),
  },
  {
    path: ['users', 'enable'],
    args: ['<user>'],
    summary: 'Enable a disabled account again',
    run: (ctx) => setDisabled(ctx, false),
  },
];
