import type { User } from '@gateway/shared';
import { baseUrl } from '../base-url.js';
import { UsageError } from '../cli-errors.js';
import { flag, text, type CommandContext, type CommandSpec } from '../command.js';
import { USER_COLUMNS } from '../columns.js';
import { readConfig, writeConfig } from '../config-file.js';
import { failure, Http } from '../http.js';
import { tokenFields, type Token } from '../session.js';

/** Signing in and out. The password is read from a terminal with echo off, or from stdin; never from a flag. */
export const login: CommandSpec = {
  path: ['login'],
  summary: 'Sign in to a control plane and keep the token',
  options: {
    url: { type: 'string', value: '<url>', help: 'the control plane, e.g. http://127.0.0.1:8081 (default: the last one signed in to)' },
    email: { type: 'string', value: '<email>', help: 'the account (default: the last one; asked when on a terminal)' },
    'password-stdin': { type: 'boolean', help: 'read the password from standard input instead of asking' },
  },
  async run(ctx) {
    const stored = await readConfig(ctx.config.path);
    const given = text(ctx, 'url');
    if (given === undefined && stored === null) throw new UsageError('--url is required: the control plane to sign in to, e.g. http://127.0.0.1:8081');
    const url = given === undefined ? (stored as { url: string }).url : baseUrl(given, 'url');
    const email = text(ctx, 'email') ?? (stored?.url === url ? stored.email : undefined) ?? (await askEmail(ctx));
    const password = await readPassword(ctx);

    const http = new Http(url, ctx.verbose);
    const answer = await http.send({ method: 'POST', path: '/v1/signins', body: { grant_type: 'password', email, password } });
    if (answer.status !== 200) throw failure(answer, url);
    await writeConfig(ctx.config, { url, email, ...tokenFields(answer.body as Token, ctx.now()) });
    ctx.out.note(`Signed in to ${url} as ${email}; the token is kept in ${ctx.config.path}.`);
  },
};

export const logout: CommandSpec = {
  path: ['logout'],
  summary: 'End the session on the control plane and forget the token',
  async run(ctx) {
    const stored = await readConfig(ctx.config.path);
    if (stored?.token === undefined) {
      ctx.out.note('Not signed in.');
      return;
    }
    const http = new Http(stored.url, ctx.verbose);
    const answer = await http.send({ method: 'POST', path: '/v1/signouts', bearer: stored.token });
    // 401: the session had already ended (expired, revoked); forgetting the token is all that is left.
    if (answer.status !== 204 && answer.status !== 401) throw failure(answer, stored.url);
    await writeConfig(ctx.config, { url: stored.url, ...(stored.email === undefined ? {} : { email: stored.email }) });
    ctx.out.note(`Signed out of ${stored.url}.`);
  },
};

export const whoami: CommandSpec = {
  path: ['whoami'],
  summary: 'The signed-in account',
  async run(ctx) {
    const user = await (await ctx.api()).get<User>('/v1/users/me');
    ctx.out.item(user, user, USER_COLUMNS);
  },
};

async function askEmail(ctx: CommandContext): Promise<string> {
  if (!ctx.term.stdinIsTTY || flag(ctx, 'password-stdin')) throw new UsageError('--email is required');
  const email = await ctx.term.ask('Email: ');
  if (email === '') throw new UsageError('an email is required');
  return email;
}

async function readPassword(ctx: CommandContext): Promise<string> {
  let password: string;
  if (flag(ctx, 'password-stdin')) password = await ctx.term.readStdin();
  else if (ctx.term.stdinIsTTY) password = await ctx.term.askHidden('Password: ');
  else throw new UsageError('standard input is not a terminal: pipe the password in with --password-stdin');
  if (password === '') throw new UsageError('the password is empty');
  return password;
}
