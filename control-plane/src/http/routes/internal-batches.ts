import type { FastifyInstance } from 'fastify';
import {
  BATCH_ENDPOINTS,
  Errors,
  type BatchApi,
  type BatchClaim,
  type BatchCreate,
  type BatchFinish,
  type BatchResults,
  type BatchResultsAck,
  type BatchRow,
  type BatchRun,
  type AuditOutcome,
  type ClaimedLine,
  isErrorCode,
} from '@gateway/shared';
import { writeAudit, type ManagementEvent } from '../../db/audit-writer.js';
import { requestFacts } from '../request-facts.js';
import type { AppContext } from '../../context.js';
import { batchResultText, cancelBatch, claimLines, createBatch, deleteBatch, finishBatch, getBatch, getBatchRun, listBatches, storeLineResults } from '../../db/batches.js';
import { requireInternalToken } from '../internal-token.js';
import { idParams, projectQuery, sendJsonLines, storedIdSchema } from './internal-files.js';

/**
 * The batches of the Batch API and of Anthropic's Message Batches, kept for the proxies:
 * - POST /internal/v1/batches: creates a batch on a processed file of the project, running at
 *   once; 400 when the file cannot be used (named line calling another endpoint among them);
 * - GET /internal/v1/batches/{id}?project_id=…, GET /internal/v1/batches?project_id=…: a batch, a
 *   page of them newest first;
 * - POST /internal/v1/batches/{id}/cancel?project_id=…: a running batch becomes `cancelling`;
 *   409 once it ended;
 * - GET /internal/v1/batches/{id}/results?project_id=…: every line with its result, streamed;
 * and, for the runners in the proxies (by batch id alone):
 * - GET …/run: the batch and its key's hash (null once the key is deleted);
 * - POST …/claim: the next unanswered lines, each with the moment it was first claimed;
 * - POST …/results: the lines' answers, a line keeping its first (retries count nothing twice);
 * - POST …/finish: ends the batch and makes its output and error files (again: answered as it is).
 * Another project's batch is 404. Authenticated with INTERNAL_TOKEN as a bearer token, before
 * the body is read; not part of the public /v1 API or its OpenAPI document.
 */

/** Answers of up to a few thousand lines, each the body a client would have had (an embedding, a long completion). */
const RESULTS_BODY_LIMIT = 64 * 1024 * 1024;
/** The answers' own JSON sits a few levels down, as in a stored response (internal-stored-responses.ts). */
const MAX_JSON_DEPTH = 160;

const reasonSchema = {
  type: 'object',
  required: ['code', 'message'],
  additionalProperties: false,
  properties: { code: { type: 'string', minLength: 1, maxLength: 64 }, message: { type: 'string', minLength: 1, maxLength: 4096 } },
} as const;

const createBody = {
  type: 'object',
  required: ['v', 'project_id', 'key_id', 'api', 'endpoint', 'input_file_id', 'completion_window', 'metadata'],
  additionalProperties: false,
  properties: {
    v: { type: 'integer', enum: [1] },
    project_id: { type: 'string', format: 'uuid' },
    key_id: { type: 'string', format: 'uuid' },
    api: { type: 'string', enum: ['openai', 'anthropic'] },
    endpoint: { type: 'string', enum: BATCH_ENDPOINTS },
    input_file_id: storedIdSchema,
    completion_window: { type: 'string', minLength: 1, maxLength: 32 },
    metadata: { type: ['object', 'null'], additionalProperties: { type: 'string' } },
  },
} as const;

const listQuery = {
  type: 'object',
  required: ['project_id'],
  additionalProperties: false,
  properties: {
    project_id: { type: 'string', format: 'uuid' },
    api: { type: 'string', enum: ['openai', 'anthropic'] },
    after: storedIdSchema,
    limit: { type: 'integer', minimum: 1, maximum: 1000, default: 20 },
  },
} as const;

const claimBody = {
  type: 'object',
  required: ['v', 'after', 'limit'],
  additionalProperties: false,
  properties: {
    v: { type: 'integer', enum: [1] },
    after: { type: 'integer', minimum: -1, maximum: 2_147_483_647 },
    limit: { type: 'integer', minimum: 1, maximum: 5000 },
  },
} as const;

/**
 * Status codes are HTTP answers (200 … 599): a line is either 2xx (completed, the output file) or
 * not (failed, the error file), with nothing between.
 */
const resultsBody = {
  type: 'object',
  required: ['v', 'results'],
  additionalProperties: false,
  properties: {
    v: { type: 'integer', enum: [1] },
    results: {
      type: 'array',
      items: {
        type: 'object',
        required: ['line_no', 'custom_id', 'status_code', 'request_id', 'body'],
        additionalProperties: false,
        properties: {
          line_no: { type: 'integer', minimum: 0, maximum: 2_147_483_647 },
          custom_id: { type: 'string', maxLength: 1024 },
          status_code: { type: 'integer', minimum: 200, maximum: 599 },
          request_id: { type: 'string', maxLength: 256 },
          body: {},
        },
      },
    },
  },
} as const;

const finishBody = {
  type: 'object',
  required: ['v', 'outcome', 'reason', 'unanswered'],
  additionalProperties: false,
  properties: {
    v: { type: 'integer', enum: [1] },
    outcome: { type: 'string', enum: ['completed', 'cancelled', 'failed', 'expired'] },
    reason: { ...reasonSchema, type: ['object', 'null'] },
    unanswered: {
      type: ['object', 'null'],
      required: ['status_code', 'code', 'message'],
      additionalProperties: false,
      properties: { status_code: { type: 'integer', minimum: 300, maximum: 599 }, ...reasonSchema.properties },
    },
  },
} as const;

/**
 * A batch's own audit event (its lines have theirs): made (`batch.created`), cancelled by a client
 * (`batch.cancelled`), deleted (`batch.deleted`) and ended (`batch.ended`, its outcome `success`, `cancelled` or `error`, a
 * deleted key's batch with error code UNAUTHORIZED), with the batch as target and in `batch_id`.
 */
function batchEvent(type: string, batch: BatchRow, outcome: AuditOutcome, status: number): ManagementEvent {
  return { type, outcome, status, projectId: batch.project_id, keyId: batch.key_id, target: { type: 'batch', id: batch.id }, batchId: batch.id };
}

export function registerInternalBatchRoutes(app: FastifyInstance, ctx: AppContext): void {
  // onRequest, before the body is read: no token, no other answer than 401.
  const onRequest = async (req: Parameters<typeof requireInternalToken>[0]) => requireInternalToken(req, ctx);

  app.post<{ Body: BatchCreate }>('/internal/v1/batches', { onRequest, schema: { body: createBody } }, async (req, reply) => {
    const { v: _v, ...input } = req.body;
    const outcome = await ctx.sql.begin(async (tx) => {
      const made = await createBatch(tx, input);
      if ('batch' in made) await writeAudit(tx, batchEvent('batch.created', made.batch, 'success', 201), requestFacts(req, reply));
      return made;
    });
    if ('batch' in outcome) return reply.status(201).send(outcome.batch);
    switch (outcome.refused) {
      case 'no_project':
        throw Errors.noSuchProject('project_id');
      case 'no_file':
        throw Errors.noSuchFile();
      case 'not_usable':
        throw Errors.batchFileNotUsable(outcome.why);
      case 'endpoint_mismatch':
        throw Errors.batchEndpointMismatch(outcome.line + 1, outcome.url, input.endpoint);
    }
  });

  app.get<{ Querystring: { project_id: string; api?: BatchApi; after?: string; limit: number } }>(
    '/internal/v1/batches',
    { onRequest, schema: { querystring: listQuery } },
    async (req) => {
      const { project_id, ...page } = req.query;
      return listBatches(ctx.sql, project_id, page);
    },
  );

  app.get<{ Params: { id: string }; Querystring: { project_id: string } }>(
    '/internal/v1/batches/:id',
    { onRequest, schema: { params: idParams, querystring: projectQuery } },
    async (req): Promise<BatchRow> => {
      const batch = await getBatch(ctx.sql, req.params.id, req.query.project_id);
      if (batch === null) throw Errors.noSuchBatch();
      return batch;
    },
  );

  app.post<{ Params: { id: string }; Querystring: { project_id: string } }>(
    '/internal/v1/batches/:id/cancel',
    { onRequest, schema: { params: idParams, querystring: projectQuery } },
    async (req, reply): Promise<BatchRow> => {
      const outcome = await ctx.sql.begin(async (tx) => {
        const cancelled = await cancelBatch(tx, req.params.id, req.query.project_id);
        if (cancelled !== 'no_batch' && 'batch' in cancelled && cancelled.fresh) await writeAudit(tx, batchEvent('batch.cancelled', cancelled.batch, 'success', 200), requestFacts(req, reply));
        return cancelled;
      });
      if (outcome === 'no_batch') throw Errors.noSuchBatch();
      if ('ended' in outcome) throw Errors.batchNotCancellable(outcome.ended);
      return outcome.batch;
    },
  );

  app.delete<{ Params: { id: string }; Querystring: { project_id: string } }>(
    '/internal/v1/batches/:id',
    { onRequest, schema: { params: idParams, querystring: projectQuery } },
    async (req, reply): Promise<BatchRow> => {
      const outcome = await ctx.sql.begin(async (tx) => {
        const deleted = await deleteBatch(tx, req.params.id, req.query.project_id);
        if (deleted !== 'no_batch' && 'batch' in deleted) await writeAudit(tx, batchEvent('batch.deleted', deleted.batch, 'success', 200), requestFacts(req, reply));
        return deleted;
      });
      if (outcome === 'no_batch') throw Errors.noSuchBatch();
      if ('running' in outcome) throw Errors.batchNotDeletable(outcome.running);
      return outcome.batch;
    },
  );

  app.get<{ Params: { id: string }; Querystring: { project_id: string } }>(
    '/internal/v1/batches/:id/results',
    { onRequest, schema: { params: idParams, querystring: projectQuery } },
    async (req, reply) => {
      if ((await getBatch(ctx.sql, req.params.id, req.query.project_id)) === null) throw Errors.noSuchBatch();
      return sendJsonLines(reply, batchResultText(ctx.sql, req.params.id, 'all'));
    },
  );

  app.get<{ Params: { id: string } }>('/internal/v1/batches/:id/run', { onRequest, schema: { params: idParams } }, async (req): Promise<BatchRun> => {
    const run = await getBatchRun(ctx.sql, req.params.id);
    if (run === null) throw Errors.noSuchBatch();
    return run;
  });

  app.post<{ Params: { id: string }; Body: BatchClaim }>(
    '/internal/v1/batches/:id/claim',
    { onRequest, schema: { params: idParams, body: claimBody } },
    async (req): Promise<{ lines: ClaimedLine[] }> => {
      const lines = await claimLines(ctx.sql, req.params.id, req.body.after, req.body.limit);
      if (lines === null) throw Errors.noSuchBatch();
      return { lines };
    },
  );

  app.post<{ Params: { id: string }; Body: BatchResults }>(
    '/internal/v1/batches/:id/results',
    { onRequest, bodyLimit: RESULTS_BODY_LIMIT, config: { maxJsonDepth: MAX_JSON_DEPTH }, schema: { params: idParams, body: resultsBody } },
    async (req): Promise<BatchResultsAck> => {
      let ack;
      try {
        ack = await ctx.sql.begin((tx) => storeLineResults(tx, req.params.id, req.body.results));
      } catch (err) {
        // JSON PostgreSQL's jsonb cannot hold (a lone surrogate escape): the body's fault, not the server's.
        const code = (err as { code?: string }).code;
        if (code === '22P02' || code === '22P05') throw Errors.unstorableText();
        throw err;
      }
      if (ack === null) throw Errors.noSuchBatch();
      return ack;
    },
  );

  app.post<{ Params: { id: string }; Body: BatchFinish }>(
    '/internal/v1/batches/:id/finish',
    { onRequest, schema: { params: idParams, body: finishBody } },
    async (req, reply): Promise<BatchRow> => {
      const { v: _v, ...finish } = req.body;
      const batch = await ctx.sql.begin(async (tx) => {
        const ended = await finishBatch(tx, req.params.id, finish);
        if (ended !== null && ended.fresh) {
          const outcome = ended.batch.status === 'completed' ? 'success' : ended.batch.status === 'cancelled' ? 'cancelled' : 'error';
          const code = ended.batch.reason?.code;
          await writeAudit(tx, { ...batchEvent('batch.ended', ended.batch, outcome, 200), errorCode: code !== undefined && isErrorCode(code) ? code : null }, requestFacts(req, reply));
        }
        return ended?.batch ?? null;
      });
      if (batch === null) throw Errors.noSuchBatch();
      return batch;
    },
  );
}
