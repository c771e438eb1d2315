import type { Api } from '../api.js';
import type { Page, StoredAuditEvent as AuditEvent, StoredUsageRecord as UsageRecord, UsageSummary } from '@gateway/shared';
import { UsageError } from '../cli-errors.js';
import { choice, flag, instant, integer, text, type CommandContext, type CommandSpec, type Options } from '../command.js';
import { AUDIT_COLUMNS, summaryColumns, USAGE_COLUMNS } from '../columns.js';
import { follow, type Stamped } from '../follow.js';
import type { Query } from '../http.js';
import type { Column } from '../output.js';
import { PAGING_OPTIONS, printPages, readPaging } from '../paging.js';
import { isId, keyOf, projectIdOf } from '../resolve.js';

/**
 * Usage records, their sums, and the audit trail: every filter GET /v1/usage, /v1/usage/summary
 * and /v1/audit take, with times as ISO dates or durations ago, and --follow to watch new ones.
 * Filter values the API checks (endpoint, finish reason, outcome, group) are passed as given, so
 * the CLI never lags behind the server's list; a bad one is the API's 400 (exit 1).
 */
const FILTERS: Options = {
  project: { type: 'string', value: '<project>', help: 'only this project (name or id)' },
  key: { type: 'string', value: '<key>', help: 'only this key: its id, or its name or prefix together with --project' },
  model: { type: 'string', value: '<model>', help: 'only this model' },
  provider: { type: 'string', value: '<provider>', help: 'only this provider' },
  endpoint: { type: 'string', value: '<endpoint>', help: 'only this gateway API: chat.completions, messages, responses, embeddings' },
  tag: { type: 'string', value: '<k=v,…>', help: 'only records carrying every one of these tags, written as the x-gateway-tags header: team=search,feature=rag' },
  'end-user': { type: 'string', value: '<user>', help: 'only records of this end user (OpenAI user, Anthropic metadata.user_id)' },
  from: { type: 'string', value: '<time>', help: 'at or after: ISO date or time (UTC unless a zone is given), a duration ago (24h, 7d), or Unix ms' },
  to: { type: 'string', value: '<time>', help: 'before: the same forms' },
};

const FINISH_REASON: Options = {
  'finish-reason': { type: 'string', value: '<reason>', help: 'only records that ended so: stop, max_tokens, tool_calls, content_filter, error, cancelled, other' },
};

const LIST_OPTIONS: Options = {
  ...PAGING_OPTIONS,
  order: { type: 'string', value: '<desc|asc>', help: 'newest first (default) or oldest first' },
  follow: { type: 'boolean', short: 'f', help: 'keep printing new records as they are written, until Ctrl-C' },
  interval: { type: 'string', value: '<seconds>', help: 'with --follow: how often to ask (default 2)' },
};

interface Filters {
  projectRef: string | undefined;
  keyRef: string | undefined;
  query: Query;
}

/** The filters as given, checked before anything is sent; names are resolved to ids by resolveFilters. */
function readFilters(ctx: CommandContext, extra: Query): Filters {
  const projectRef = text(ctx, 'project');
  const keyRef = text(ctx, 'key');
  if (keyRef !== undefined && !isId(keyRef) && projectRef === undefined) throw new UsageError('--key takes a key id, or a name or prefix together with --project');
  const from = instant(ctx, 'from');
  const to = instant(ctx, 'to');
  if (from !== undefined && to !== undefined && from > to) throw new UsageError('--from is after --to');
  const tags = text(ctx, 'tag')
    ?.split(',')
    .map((pair) => pair.trim())
    .filter((pair) => pair !== '');
  return {
    projectRef,
    keyRef,
    query: { model: text(ctx, 'model'), provider: text(ctx, 'provider'), endpoint: text(ctx, 'endpoint'), tag: tags, end_user: text(ctx, 'end-user'), from, to, ...extra },
  };
}

async function resolveFilters(api: Api, filters: Filters): Promise<Query> {
  const projectId = filters.projectRef === undefined ? undefined : await projectIdOf(api, filters.projectRef);
  let keyId = filters.keyRef;
  if (keyId !== undefined && !isId(keyId)) keyId = (await keyOf(api, projectId as string, keyId)).id;
  return { project_id: projectId, key_id: keyId, ...filters.query };
}

async function listRecords<T extends Stamped>(ctx: CommandContext, path: string, extra: Query, columns: Column<T>[]): Promise<void> {
  const filters = readFilters(ctx, extra);
  if (flag(ctx, 'follow')) return followRecords(ctx, path, filters, columns);
  const order = choice(ctx, 'order', ['desc', 'asc'] as const);
  const paging = readPaging(ctx);
  const api = await ctx.api();
  const query = { ...(await resolveFilters(api, filters)), ...(order === undefined ? {} : { [`order_${order}`]: 'timestamp' }) };
  await printPages(ctx, api, path, query, paging, columns);
}

async function followRecords<T extends Stamped>(ctx: CommandContext, path: string, filters: Filters, columns: Column<T>[]): Promise<void> {
  for (const name of ['all', 'cursor', 'order', 'to']) {
    if (ctx.values[name] !== undefined) throw new UsageError(`--follow prints records as they come, oldest first; it takes no --${name}`);
  }
  const interval = text(ctx, 'interval') ?? '2';
  if (!/^\d+(\.\d+)?$/.test(interval) || Number(interval) < 0.1) throw new UsageError(`--interval takes seconds, at least 0.1, not "${interval}"`);
  const limit = integer(ctx, 'limit', 1) ?? 1000;
  const api = await ctx.api();
  const query = await resolveFilters(api, filters);
  const since = typeof query.from === 'number' ? query.from : ctx.now();
  const stop = new AbortController();
  const onInterrupt = () => stop.abort();
  process.once('SIGINT', onInterrupt);
  const show = ctx.out.stream(columns);
  ctx.out.note(`Following ${path === '/v1/audit' ? 'audit events' : 'usage records'} from ${new Date(since).toISOString()}; Ctrl-C to stop.`);
  try {
    await follow<T>(
      async (from) => {
        const rows: T[] = [];
        let cursor: string | undefined;
        do {
          const page: Page<T> = await api.get<Page<T>>(path, { ...query, from, limit, order_asc: 'timestamp', cursor }, stop.signal);
          rows.push(...page.data);
          cursor = page.next_cursor ?? undefined;
        } while (cursor !== undefined);
        return rows;
      },
      show,
      { since, intervalMs: Number(interval) * 1000, signal: stop.signal },
    );
  } finally {
    process.off('SIGINT', onInterrupt);
  }
}

export const recordCommands: CommandSpec[] = [
  {
    path: ['usage'],
    summary: 'Usage records: one per request that reached a provider, newest first',
    options: { ...FILTERS, ...FINISH_REASON, ...LIST_OPTIONS },
    run: (ctx) => listRecords<UsageRecord>(ctx, '/v1/usage', { finish_reason: text(ctx, 'finish-reason') }, USAGE_COLUMNS),
  },
  {
    path: ['usage', 'summary'],
    summary: 'Requests, tokens and cost of the usage records, per group and in total',
    options: {
      ...FILTERS,
      ...FINISH_REASON,
      'group-by': { type: 'string', value: '<model|project|provider|key|endpoint|end_user|tag:<key>>', help: 'what each line sums over (default model); tag:team sums per value of the team tag' },
    },
    async run(ctx) {
      const group = text(ctx, 'group-by') ?? 'model';
      const filters = readFilters(ctx, { finish_reason: text(ctx, 'finish-reason'), group_by: group });
      const api = await ctx.api();
      const summary = await api.get<UsageSummary>('/v1/usage/summary', await resolveFilters(api, filters));
      // A tag's value is under `tag` in each entry, whichever tag was asked for.
      ctx.out.list(summary, summary.data, summaryColumns(group.startsWith('tag:') ? 'tag' : group), summary.totals);
    },
  },
  {
    path: ['audit'],
    summary: 'Audit events: every gateway request and management action, newest first',
    options: {
      ...FILTERS,
      type: { type: 'string', value: '<type>', help: 'only events of this type, e.g. key.deleted, gateway.request' },
      outcome: { type: 'string', value: '<outcome>', help: 'only events with this outcome, e.g. success, auth_failed, policy_blocked' },
      ...LIST_OPTIONS,
    },
    run: (ctx) => listRecords<AuditEvent>(ctx, '/v1/audit', { type: text(ctx, 'type'), outcome: text(ctx, 'outcome') }, AUDIT_COLUMNS),
  },
];
