import type { FastifyInstance } from 'fastify';
import { Errors, type BatchApi, type BatchRow } from '@gateway/shared';
import { principalOf, type Principal } from '../../auth/require-auth.js';
import { batchView, outputFileText } from '../../batches/batch-output.js';
import type { BatchView, BatchViewPage } from '../../batches/batch-view.js';
import type { AppContext } from '../../context.js';
import { batchResultText, cancelBatch, getBatch, listBatches } from '../../db/batches.js';
import { writeAudit } from '../../db/audit-writer.js';
import { BatchWaker } from '../../batches/batch-wake.js';
import { requestFacts } from '../request-facts.js';
import { projectAccess } from '../project-access.js';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../record-list.js';
import { ERROR_RESPONSES, projectParams, ref, uuidSchema } from '../schemas.js';
import { sendJsonLines, storedIdSchema } from './internal-files.js';

/**
 * A project's batches (docs/batches.md) for the people of the project: every member, viewers
 * included, and account admins read them, their progress and the lines of their output and error
 * files; members (and above) may cancel one, as a client may with a key. Batches are made by
 * clients on the proxy with the project's keys.
 */
interface BatchListQuery {
  limit: number;
  after?: string;
  api?: BatchApi;
}

const batchParams = {
  type: 'object',
  required: ['id', 'batch_id'],
  additionalProperties: false,
  properties: {
    id: { ...uuidSchema, description: 'Project id.' },
    // As loose as the proxy's: an id of no batch is a 404, never a 400 about its shape.
    batch_id: { ...storedIdSchema, description: 'Batch id (`batch_…` or `msgbatch_…`).' },
  },
} as const;

const batchPage = {
  type: 'object',
  required: ['data', 'next_cursor', 'has_more'],
  properties: {
    data: { type: 'array', items: ref('Batch') },
    next_cursor: { type: ['string', 'null'], description: 'Pass as `after` for the next page; null on the last page.' },
    has_more: { type: 'boolean' },
  },
} as const;

const jsonLinesAnswer = {
  200: {
    description:
      'JSON lines in the shape of an OpenAI batch output file, one per line answered, in line order: `{"id": "batch_req_…", "custom_id", "response": {"status_code", "request_id", "body"}, "error"}`.',
    content: { 'application/jsonl': { schema: { type: 'string' } } },
  },
  ...ERROR_RESPONSES,
};

export function registerBatchRoutes(app: FastifyInstance, ctx: AppContext): void {
  const waker = new BatchWaker(ctx.redis, ctx.keys);
  app.addHook('onClose', () => waker.close());

  app.get<{ Params: { id: string }; Querystring: BatchListQuery }>(
    '/v1/projects/:id/batches',
    {
      schema: {
        tags: ['batches'],
        summary: "The project's batches, newest first, of both APIs",
        description: 'Paged by batch: follow `next_cursor` as `after` while `has_more`.',
        params: projectParams,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: 'Batches per page.' },
            after: { ...storedIdSchema, description: '`next_cursor` of the previous page: the batches made before this one.' },
            api: { type: 'string', enum: ['openai', 'anthropic'], description: 'Only the batches of this API.' },
          },
        },
        response: { 200: batchPage, ...ERROR_RESPONSES },
      },
    },
    async (req): Promise<BatchViewPage> => {
      await projectAccess(ctx.sql, principalOf(req), req.params.id, 'project.read', 'read this project');
      const { limit, after, api } = req.query;
      const page = await listBatches(ctx.sql, req.params.id, { limit, ...(after === undefined ? {} : { after }), ...(api === undefined ? {} : { api }) });
      const data = page.data.map(batchView);
      return { data, next_cursor: page.has_more ? (data.at(-1)?.id ?? null) : null, has_more: page.has_more };
    },
  );

  app.get<{ Params: { id: string; batch_id: string } }>(
    '/v1/projects/:id/batches/:batch_id',
    {
      schema: {
        tags: ['batches'],
        summary: 'One batch of the project, with its progress',
        params: batchParams,
        response: { 200: ref('Batch'), ...ERROR_RESPONSES },
      },
    },
    async (req): Promise<BatchView> => batchView(await projectBatch(ctx, principalOf(req), req.params)),
  );

  app.post<{ Params: { id: string; batch_id: string } }>(
    '/v1/projects/:id/batches/:batch_id/cancel',
    {
      schema: {
        tags: ['batches'],
        summary: 'Cancels a running batch, as a client may with a key of the project',
        description:
          'The batch becomes `cancelling`: no line starts again, the lines in flight are stopped, a provider-run batch is cancelled at its provider, and the batch then ends `cancelled` with the answers made kept. A batch cancelling already is answered as it is; one that has ended is a 409 `CONFLICT`. Audited `batch.cancelled` with the caller as actor.',
        params: batchParams,
        response: { 200: ref('Batch'), ...ERROR_RESPONSES },
      },
    },
    async (req, reply): Promise<BatchView> => {
      const principal = principalOf(req);
      const outcome = await ctx.sql.begin(async (tx) => {
        await projectAccess(tx, principal, req.params.id, 'batch.cancel', 'cancel a batch of this project');
        const cancelled = await cancelBatch(tx, req.params.batch_id, req.params.id);
        if (cancelled !== 'no_batch' && 'batch' in cancelled && cancelled.fresh) {
          const { batch } = cancelled;
          await writeAudit(
            tx,
            { type: 'batch.cancelled', outcome: 'success', status: 200, projectId: batch.project_id, keyId: batch.key_id, actor: principal.userId, target: { type: 'batch', id: batch.id }, batchId: batch.id },
            requestFacts(req, reply),
          );
        }
        return cancelled;
      });
      if (outcome === 'no_batch') throw Errors.noSuchBatch();
      if ('ended' in outcome) throw Errors.batchNotCancellable(outcome.ended);
      await waker.wake(outcome.batch.id);
      return batchView(outcome.batch);
    },
  );

  for (const which of ['output', 'errors'] as const) {
    app.get<{ Params: { id: string; batch_id: string } }>(
      `/v1/projects/:id/batches/:batch_id/${which}`,
      {
        schema: {
          tags: ['batches'],
          summary:
            which === 'output'
              ? "The batch's output file: its lines answered 2xx, streamed as JSON lines"
              : "The batch's error file: its lines answered otherwise, streamed as JSON lines",
          description:
            'The lines answered so far while the batch runs; once it has ended, the content of its ' +
            (which === 'output' ? '`output_file_id`' : '`error_file_id`') +
            ' as the gateway serves it at `GET /v1/files/{id}/content` (empty when there is none).',
          params: batchParams,
          response: jsonLinesAnswer,
        },
      },
      async (req, reply) => {
        const batch = await projectBatch(ctx, principalOf(req), req.params);
        // Ids are [A-Za-z0-9_-] (storedIdSchema): nothing in them needs quoting in the header.
        void reply.header('content-disposition', `attachment; filename="${batch.id}_${which === 'output' ? 'output' : 'error'}.jsonl"`);
        return sendJsonLines(reply, outputFileText(batch.id, batchResultText(ctx.sql, batch.id, which === 'output' ? 'output' : 'error')));
      },
    );
  }
}

/** The project's batch, for a caller who may read the project; another project's is as absent as one never made. */
async function projectBatch(ctx: AppContext, principal: Principal, params: { id: string; batch_id: string }): Promise<BatchRow> {
  await projectAccess(ctx.sql, principal, params.id, 'project.read', 'read this project');
  const batch = await getBatch(ctx.sql, params.batch_id, params.id);
  if (batch === null) throw Errors.noSuchBatch();
  return batch;
}
