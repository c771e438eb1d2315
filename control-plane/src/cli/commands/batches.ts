import type { BatchView, BatchViewPage } from '../../batches/batch-view.js';
import type { Api } from '../api.js';
import { arg, choice, flag, integer, required, text, type CommandContext, type CommandSpec } from '../command.js';
import type { Column } from '../output.js';
import { projectIdOf } from '../resolve.js';

/**
 * A project's batches (docs/batches.md): the list with each batch's progress, one batch, the lines
 * of its output or error file, and cancelling one. Batches are made by clients on the proxy with
 * the project's keys.
 */
const BATCH_COLUMNS: Column<BatchView>[] = [
  { field: 'id', get: (b) => b.id },
  { field: 'project_id', get: (b) => b.project_id, csvOnly: true },
  { field: 'api', get: (b) => b.api },
  { field: 'endpoint', get: (b) => b.endpoint, csvOnly: true },
  { field: 'status', get: (b) => b.status },
  // Lines answered (either way) of all: how far it has got, whatever the outcome of each.
  { field: 'progress', get: (b) => `${b.request_counts.completed + b.request_counts.failed}/${b.request_counts.total}` },
  { field: 'request_counts.total', kind: 'number', get: (b) => b.request_counts.total, csvOnly: true },
  { field: 'request_counts.completed', kind: 'number', get: (b) => b.request_counts.completed, csvOnly: true },
  { field: 'request_counts.failed', kind: 'number', get: (b) => b.request_counts.failed, csvOnly: true },
  { field: 'created_at', title: 'CREATED', kind: 'instant', get: (b) => b.created_at },
  { field: 'key_id', title: 'KEY', get: (b) => b.key_id },
  { field: 'input_file_id', get: (b) => b.input_file_id, csvOnly: true },
  { field: 'output_file_id', get: (b) => b.output_file_id, csvOnly: true },
  { field: 'error_file_id', get: (b) => b.error_file_id, csvOnly: true },
  { field: 'in_progress_at', kind: 'instant', get: (b) => b.in_progress_at, csvOnly: true },
  { field: 'completed_at', kind: 'instant', get: (b) => b.completed_at, csvOnly: true },
  { field: 'failed_at', kind: 'instant', get: (b) => b.failed_at, csvOnly: true },
  { field: 'cancelling_at', kind: 'instant', get: (b) => b.cancelling_at, csvOnly: true },
  { field: 'cancelled_at', kind: 'instant', get: (b) => b.cancelled_at, csvOnly: true },
  { field: 'expires_at', kind: 'instant', get: (b) => b.expires_at, csvOnly: true },
  { field: 'reason.code', get: (b) => b.reason?.code ?? null, csvOnly: true },
  { field: 'metadata', get: (b) => (b.metadata === null ? null : JSON.stringify(b.metadata)), csvOnly: true },
];

const PROJECT_OPTION = { project: { type: 'string', value: '<project>', help: 'the project (name or id; required)' } } as const;

/** The management API and the path of the batch named by the first argument in the --project. */
async function batchPath(ctx: CommandContext): Promise<{ api: Api; path: string }> {
  const projectRef = required(ctx, 'project');
  const api = await ctx.api();
  return { api, path: `/v1/projects/${await projectIdOf(api, projectRef)}/batches/${encodeURIComponent(arg(ctx, 0))}` };
}

async function* decoded(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  // stream: a character split across two chunks is decoded once both are in.
  for await (const chunk of chunks) yield decoder.decode(chunk, { stream: true });
  const rest = decoder.decode();
  if (rest !== '') yield rest;
}

export const batchCommands: CommandSpec[] = [
  {
    path: ['batches', 'list'],
    summary: "A project's batches, newest first, with how many of their lines are answered",
    options: {
      ...PROJECT_OPTION,
      api: { type: 'string', value: '<openai|anthropic>', help: 'only the batches of this API' },
      limit: { type: 'string', value: '<n>', help: 'batches per page, 1–1000 (default 50; 1000 with --all)' },
      all: { type: 'boolean', help: 'every page' },
      after: { type: 'string', value: '<batch id>', help: 'the batches made before this one (the next_cursor of an earlier page)' },
    },
    async run(ctx) {
      const projectRef = required(ctx, 'project');
      const apiName = choice(ctx, 'api', ['openai', 'anthropic'] as const);
      const all = flag(ctx, 'all');
      const limit = integer(ctx, 'limit', 1) ?? (all ? 1000 : undefined);
      const api = await ctx.api();
      const path = `/v1/projects/${await projectIdOf(api, projectRef)}/batches`;
      let page = await api.get<BatchViewPage>(path, { api: apiName, limit, after: text(ctx, 'after') });
      if (all) {
        const data = [...page.data];
        while (page.has_more && page.next_cursor !== null) {
          page = await api.get<BatchViewPage>(path, { api: apiName, limit, after: page.next_cursor });
          data.push(...page.data);
        }
        page = { data, next_cursor: null, has_more: false };
      }
      ctx.out.list(page, page.data, BATCH_COLUMNS);
      if (page.has_more && ctx.out.format !== 'json') ctx.out.note(`More follow: add --all for every page, or --after ${page.next_cursor} for the next one.`);
    },
  },
  {
    path: ['batches', 'show'],
    args: ['<batch id>'],
    summary: 'One batch: its status, line counts, files and times',
    options: PROJECT_OPTION,
    async run(ctx) {
      const { api, path } = await batchPath(ctx);
      const batch = await api.get<BatchView>(path);
      ctx.out.item(batch, batch, BATCH_COLUMNS);
    },
  },
  {
    path: ['batches', 'cancel'],
    args: ['<batch id>'],
    summary: 'Cancels a running batch: no line starts again, its provider batches are cancelled, the answers made are kept',
    options: PROJECT_OPTION,
    async run(ctx) {
      const { api, path } = await batchPath(ctx);
      const batch = await api.post<BatchView>(`${path}/cancel`);
      ctx.out.item(batch, batch, BATCH_COLUMNS);
    },
  },
  {
    path: ['batches', 'output'],
    args: ['<batch id>'],
    summary: "A batch's output file (its lines answered 2xx) as JSON lines on stdout; --errors: its error file",
    options: { ...PROJECT_OPTION, errors: { type: 'boolean', help: 'the lines answered otherwise (the error file) instead' } },
    async run(ctx) {
      const { api, path } = await batchPath(ctx);
      // JSON lines whatever --output says: they are the file, as the gateway serves it.
      await ctx.out.pipe(decoded(await api.download(`${path}/${flag(ctx, 'errors') ? 'errors' : 'output'}`)));
    },
  },
];
