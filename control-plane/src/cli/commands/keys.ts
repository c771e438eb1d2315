import type { ApiKey, List, NewApiKey } from '@gateway/shared';
import type { Api } from '../api.js';
import { UsageError } from '../cli-errors.js';
import { arg, flag, instant, required, text, type CommandContext, type CommandSpec } from '../command.js';
import { KEY_COLUMNS, NEW_KEY_COLUMNS } from '../columns.js';
import { keyOf, projectIdOf } from '../resolve.js';

/**
 * API keys of a project. A new key's secret exists in one answer only, so it is printed then and
 * never again: with --quiet as the only thing on stdout, for a script to capture.
 */
const NEW_KEY_OPTIONS = {
  expires: { type: 'string', value: '<time>', help: 'when the key stops working: an ISO date or a duration from now (90d); default never' },
  quiet: { type: 'boolean', short: 'q', help: 'print only the secret, on stdout' },
} as const;

const YES = { type: 'boolean', short: 'y', help: 'do not ask for confirmation' } as const;

/** `expires` is read before anything is sent: a bad flag costs nothing. */
async function createKey(ctx: CommandContext, api: Api, projectId: string, name: string, expires: number | undefined, tags?: Record<string, string>): Promise<NewApiKey> {
  const key = await api.post<NewApiKey>(`/v1/projects/${projectId}/keys`, {
    name,
    ...(expires === undefined ? {} : { expires_at: new Date(expires).toISOString() }),
    ...(tags === undefined ? {} : { tags }),
  });
  if (flag(ctx, 'quiet')) ctx.out.raw(key.key);
  else {
    ctx.out.item(key, key, NEW_KEY_COLUMNS);
    ctx.out.note(`Created key "${key.name}" (${key.id}). This is the only time its secret is shown: keep it now.`);
  }
  return key;
}

function describe(key: ApiKey): string {
  return `"${key.name}" (${key.prefix}…, ${key.id})`;
}

export const keyCommands: CommandSpec[] = [
  {
    path: ['keys', 'list'],
    args: ['<project>'],
    summary: "A project's keys (never their secrets)",
    async run(ctx) {
      const api = await ctx.api();
      const answer = await api.get<List<ApiKey>>(`/v1/projects/${await projectIdOf(api, arg(ctx, 0))}/keys`);
      ctx.out.list(answer, answer.data, KEY_COLUMNS);
    },
  },
  {
    path: ['keys', 'create'],
    args: ['<project>'],
    summary: 'Create a key and print its secret, once',
    options: {
      name: { type: 'string', value: '<name>', help: 'what the key is for (required)' },
      tags: { type: 'string', value: '<k=v,…>', help: "default cost-attribution tags of the key's requests, e.g. team=search,env=prod" },
      ...NEW_KEY_OPTIONS,
    },
    async run(ctx) {
      const name = required(ctx, 'name');
      const expires = instant(ctx, 'expires', 'ahead');
      const tags = text(ctx, 'tags');
      const api = await ctx.api();
      // Checked by the API, which names a tag it refuses; a pair without `=` is sent as a key with an empty value.
      const parsed = tags === undefined ? undefined : Object.fromEntries(tags.split(',').filter((p) => p.trim() !== '').map((p) => { const at = p.indexOf('='); return at < 0 ? [p.trim(), ''] : [p.slice(0, at).trim(), p.slice(at + 1).trim()]; }));
      await createKey(ctx, api, await projectIdOf(api, arg(ctx, 0)), name, expires, parsed);
    },
  },
  {
    path: ['keys', 'delete'],
    args: ['<project>', '<key>'],
    summary: 'Delete a key (by id, name or prefix): every proxy refuses it at once; asks first',
    options: { yes: YES },
    async run(ctx) {
      const api = await ctx.api();
      const projectId = await projectIdOf(api, arg(ctx, 0));
      const key = await keyOf(api, projectId, arg(ctx, 1));
      if (!flag(ctx, 'yes') && !(await ctx.term.confirm(`Delete key ${describe(key)}?`, '--yes'))) {
        ctx.out.note('Nothing deleted.');
        return;
      }
      await api.delete(`/v1/projects/${projectId}/keys/${key.id}`);
      ctx.out.note(`Deleted key ${describe(key)}; every proxy refuses it now.`);
    },
  },
  {
    path: ['keys', 'rotate'],
    args: ['<project>', '<key>'],
    summary: 'Replace a key: create a new one, print it, then delete the old one (asks first)',
    options: {
      name: { type: 'string', value: '<name>', help: "the new key's name (default: the old key's)" },
      ...NEW_KEY_OPTIONS,
      yes: { ...YES, help: 'delete the old key without asking' },
    },
    async run(ctx) {
      // Asked before anything is created: without a terminal and without --yes the old key could not go.
      if (!flag(ctx, 'yes') && !ctx.term.stdinIsTTY) throw new UsageError('nobody to ask whether to delete the old key without a terminal; add --yes');
      const expires = instant(ctx, 'expires', 'ahead');
      const api = await ctx.api();
      const projectId = await projectIdOf(api, arg(ctx, 0));
      const old = await keyOf(api, projectId, arg(ctx, 1));
      const fresh = await createKey(ctx, api, projectId, text(ctx, 'name') ?? old.name, expires);
      if (!flag(ctx, 'yes') && !(await ctx.term.confirm(`Delete the old key ${describe(old)} now?`, '--yes'))) {
        ctx.out.note(`The old key ${describe(old)} still works; delete it with: gatewayctl keys delete ${projectId} ${old.id}`);
        return;
      }
      await api.delete(`/v1/projects/${projectId}/keys/${old.id}`);
      ctx.out.note(`Deleted the old key ${describe(old)}; use the new one, ${fresh.prefix}….`);
    },
  },
];
