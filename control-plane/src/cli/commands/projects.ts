import type { List, Project } from '@gateway/shared';
import { UsageError } from '../cli-errors.js';
import { arg, choice, flag, integer, limitOrNone, text, type CommandContext, type CommandSpec, type Options } from '../command.js';
import { PROJECT_COLUMNS } from '../columns.js';
import { parseMcpOption } from '../mcp-option.js';
import { projectIdOf, projectOf } from '../resolve.js';

/** Projects and the policy every proxy enforces for them. `<project>` is a name or an id. */
const POLICY_OPTIONS: Options = {
  quota: { type: 'string', value: '<tokens|none>', help: 'token quota' },
  period: { type: 'string', value: '<total|month>', help: 'what the quota counts: all time, or each calendar month (UTC)' },
  'key-rpm': { type: 'string', value: '<n|none>', help: 'requests per minute per key' },
  'key-tpm': { type: 'string', value: '<n|none>', help: 'tokens per minute per key' },
  'project-rpm': { type: 'string', value: '<n|none>', help: 'requests per minute for the project' },
  'project-tpm': { type: 'string', value: '<n|none>', help: 'tokens per minute for the project' },
  'allowed-models': { type: 'string', value: '<a,b,…>', help: 'the only models the project may use, comma-separated' },
  'any-model': { type: 'boolean', help: 'allow every routed model (removes --allowed-models)' },
  'max-tokens-cap': { type: 'string', value: '<n|none>', help: 'largest max_tokens a request may ask for' },
  mcp: { type: 'string', value: "<'srv[=tool,…];…'|none>", help: 'MCP servers (and tools) the keys may use; none: no MCP (docs/mcp.md)' },
  cache: { type: 'string', value: '<off|exact>', help: 'the response cache: exact replays answers to identical requests (docs/caching.md)' },
  'cache-ttl': { type: 'string', value: '<seconds>', help: 'how long a cached answer is served (with --cache; default 3600)' },
  'model-aliases': { type: 'string', value: "<'asked=served;…'|none>", help: 'model ids the clients ask for, served by others (replaces the whole setting)' },
  'unsupported-params': { type: 'string', value: '<drop|refuse>', help: 'a parameter a translated request cannot carry: drop it (the default) or refuse the request' },
  'responses-ttl-days': { type: 'string', value: '<days|default>', help: 'days stored Responses API responses are kept (1..3650; default: 30)' },
};

const RATE_LIMITS = [
  ['key-rpm', 'key_rpm'],
  ['key-tpm', 'key_tpm'],
  ['project-rpm', 'project_rpm'],
  ['project-tpm', 'project_tpm'],
] as const;

/** The policy fields the flags set; a field whose flag is absent is left out (unchanged, or the default). */
function policyBody(ctx: CommandContext): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const quota = limitOrNone(ctx, 'quota');
  if (quota !== undefined) body.quota_tokens = quota;
  const period = choice(ctx, 'period', ['total', 'month'] as const);
  if (period !== undefined) body.quota_period = period;
  const limits: Record<string, number | null> = {};
  for (const [name, field] of RATE_LIMITS) {
    const limit = limitOrNone(ctx, name);
    if (limit !== undefined) limits[field] = limit;
  }
  if (Object.keys(limits).length > 0) body.rate_limits = limits;
  const models = text(ctx, 'allowed-models');
  if (models !== undefined && flag(ctx, 'any-model')) throw new UsageError('give --allowed-models or --any-model, not both');
  if (models !== undefined) body.allowed_models = [...new Set(models.split(',').map((m) => m.trim()).filter((m) => m !== ''))];
  if (flag(ctx, 'any-model')) body.allowed_models = null;
  const cap = limitOrNone(ctx, 'max-tokens-cap', 1);
  if (cap !== undefined) body.max_tokens_cap = cap;
  const mcp = text(ctx, 'mcp');
  if (mcp !== undefined) body.mcp = parseMcpOption(mcp);
  const aliases = text(ctx, 'model-aliases');
  if (aliases !== undefined) body.model_aliases = parseAliases(aliases);
  const unsupported = choice(ctx, 'unsupported-params', ['drop', 'refuse'] as const);
  if (unsupported !== undefined) body.unsupported_params = unsupported;
  const ttlDays = text(ctx, 'responses-ttl-days')?.toLowerCase() === 'default' ? null : integer(ctx, 'responses-ttl-days', 1);
  if (ttlDays !== undefined) body.responses = ttlDays === null ? null : { ttl_days: ttlDays };
  const cache = choice(ctx, 'cache', ['off', 'exact'] as const);
  const ttl = integer(ctx, 'cache-ttl', 1);
  // The API replaces the setting as a whole: a TTL alone would silently switch the cache off.
  if (ttl !== undefined && cache === undefined) throw new UsageError('give --cache with --cache-ttl');
  if (cache !== undefined) body.cache = { mode: cache, ...(ttl === undefined ? {} : { ttl_seconds: ttl }) };
  return body;
}

/** `--model-aliases 'claude-opus-5-5=claude-sonnet-5;gpt-6=gpt-5-mini'`, or `none`. */
export function parseAliases(value: string): Record<string, string> | null {
  if (value.trim() === 'none') return null;
  const aliases: Record<string, string> = {};
  for (const part of value.split(';')) {
    if (part.trim() === '') continue;
    const eq = part.indexOf('=');
    const asked = eq < 0 ? '' : part.slice(0, eq).trim();
    const served = eq < 0 ? '' : part.slice(eq + 1).trim();
    if (asked === '' || served === '') throw new UsageError(`--model-aliases: "${part.trim()}" is not asked=served`);
    aliases[asked] = served;
  }
  if (Object.keys(aliases).length === 0) throw new UsageError("--model-aliases: give 'asked=served;…' or none");
  return aliases;
}

export const projectCommands: CommandSpec[] = [
  {
    path: ['projects', 'list'],
    summary: 'Your projects (every project for account admins)',
    async run(ctx) {
      const answer = await (await ctx.api()).get<List<Project>>('/v1/projects');
      ctx.out.list(answer, answer.data, PROJECT_COLUMNS);
    },
  },
  {
    path: ['projects', 'get'],
    args: ['<project>'],
    summary: 'One project, with its policy and the tokens used',
    async run(ctx) {
      const project = await projectOf(await ctx.api(), arg(ctx, 0));
      ctx.out.item(project, project, PROJECT_COLUMNS);
    },
  },
  {
    path: ['projects', 'create'],
    args: ['<name>'],
    summary: 'Create a project; you become its owner',
    options: POLICY_OPTIONS,
    async run(ctx) {
      const body = { name: arg(ctx, 0), ...policyBody(ctx) };
      const project = await (await ctx.api()).post<Project>('/v1/projects', body);
      ctx.out.item(project, project, PROJECT_COLUMNS);
      ctx.out.note(`Created project "${project.name}" (${project.id}).`);
    },
  },
  {
    path: ['projects', 'update'],
    args: ['<project>'],
    summary: 'Rename a project or change its policy (takes effect on every proxy at once)',
    options: { name: { type: 'string', value: '<name>', help: 'the new name' }, ...POLICY_OPTIONS },
    async run(ctx) {
      const name = text(ctx, 'name');
      const body = { ...(name === undefined ? {} : { name }), ...policyBody(ctx) };
      if (Object.keys(body).length === 0) throw new UsageError('nothing to change: give --name or a policy flag (see --help)');
      const api = await ctx.api();
      const project = await api.patch<Project>(`/v1/projects/${await projectIdOf(api, arg(ctx, 0))}`, body);
      ctx.out.item(project, project, PROJECT_COLUMNS);
    },
  },
  {
    path: ['projects', 'purge-cache'],
    args: ['<project>'],
    summary: "Delete the project's cached answers (docs/caching.md)",
    async run(ctx) {
      const api = await ctx.api();
      const project = await projectOf(api, arg(ctx, 0));
      const answer = await api.send<{ purged: number }>('DELETE', `/v1/projects/${project.id}/cache`);
      ctx.out.item(answer.body, answer.body, [{ field: 'purged', title: 'PURGED', kind: 'number', get: (a) => a.purged }]);
      ctx.out.note(`Purged ${answer.body.purged} cached answers of project "${project.name}".`);
    },
  },
  {
    path: ['projects', 'delete'],
    args: ['<project>'],
    summary: 'Delete a project and every key of it (owners); asks first',
    options: { yes: { type: 'boolean', short: 'y', help: 'do not ask for confirmation' } },
    async run(ctx) {
      const api = await ctx.api();
      const project = await projectOf(api, arg(ctx, 0));
      if (!flag(ctx, 'yes') && !(await ctx.term.confirm(`Delete project "${project.name}" (${project.id}) and all its keys?`, '--yes'))) {
        ctx.out.note('Nothing deleted.');
        return;
      }
      await api.delete(`/v1/projects/${project.id}`);
      ctx.out.note(`Deleted project "${project.name}" (${project.id}); its keys no longer work.`);
    },
  },
];
