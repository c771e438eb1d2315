import type { FastifyInstance } from 'fastify';
import { Errors, type BatchSubmission, type ClaimedLine, type LinesRead, type SubmissionCreate, type SubmissionEnd } from '@gateway/shared';
import type { AppContext } from '../../context.js';
import { addSubmission, endSubmission, listSubmissions, readLines } from '../../db/batch-submissions.js';
import { requireInternalToken } from '../internal-token.js';
import { idParams, storedIdSchema } from './internal-files.js';

/**
 * For the runners of provider-run batches (a provider entry's `batch: native`), by batch id alone:
 * - POST /internal/v1/batches/{id}/submissions: a provider's batch holding these lines was made;
 *   they are claimed no more (sent again with the same upstream id: the first answer);
 * - GET …/submissions: the batch's submissions, oldest first;
 * - POST …/submissions/{sub}/end: collected (or cancelled), nothing more comes from it;
 * - POST …/lines: the input of the named lines not answered yet (a submission's, as its results
 *   are collected).
 * INTERNAL_TOKEN as a bearer token, before the body is read.
 */
const MAX_LINES = 5_000;

const lineNos = { type: 'array', minItems: 1, maxItems: 50_000, items: { type: 'integer', minimum: 0, maximum: 2_147_483_647 } } as const;

const createBody = {
  type: 'object',
  required: ['v', 'provider', 'upstream_id', 'line_nos'],
  additionalProperties: false,
  properties: {
    v: { type: 'integer', enum: [1] },
    provider: { type: 'string', minLength: 1, maxLength: 64 },
    upstream_id: { type: 'string', minLength: 1, maxLength: 512 },
    line_nos: lineNos,
  },
} as const;

const endBody = {
  type: 'object',
  required: ['v', 'status'],
  additionalProperties: false,
  properties: { v: { type: 'integer', enum: [1] }, status: { type: 'string', enum: ['collected', 'cancelled'] } },
} as const;

const linesBody = {
  oneOf: [
    {
      type: 'object',
      required: ['v', 'line_nos'],
      additionalProperties: false,
      properties: { v: { type: 'integer', enum: [1] }, line_nos: { ...lineNos, maxItems: MAX_LINES } },
    },
    {
      type: 'object',
      required: ['v', 'submission_id', 'after', 'limit'],
      additionalProperties: false,
      properties: {
        v: { type: 'integer', enum: [1] },
        submission_id: storedIdSchema,
        after: { type: 'integer', minimum: -1, maximum: 2_147_483_647 },
        limit: { type: 'integer', minimum: 1, maximum: MAX_LINES },
      },
    },
  ],
} as const;

const submissionParams = { type: 'object', required: ['id', 'sub'], properties: { id: storedIdSchema, sub: storedIdSchema } } as const;

export function registerInternalBatchSubmissionRoutes(app: FastifyInstance, ctx: AppContext): void {
  const onRequest = async (req: Parameters<typeof requireInternalToken>[0]) => requireInternalToken(req, ctx);

  app.post<{ Params: { id: string }; Body: SubmissionCreate }>(
    '/internal/v1/batches/:id/submissions',
    { onRequest, schema: { params: idParams, body: createBody } },
    async (req, reply) => {
      const { v: _v, ...submission } = req.body;
      const made: BatchSubmission | null = await ctx.sql.begin((tx) => addSubmission(tx, req.params.id, submission));
      if (made === null) throw Errors.noSuchBatch();
      return reply.status(201).send(made);
    },
  );

  app.get<{ Params: { id: string } }>('/internal/v1/batches/:id/submissions', { onRequest, schema: { params: idParams } }, async (req): Promise<{ data: BatchSubmission[] }> => {
    return { data: await listSubmissions(ctx.sql, req.params.id) };
  });

  app.post<{ Params: { id: string; sub: string }; Body: SubmissionEnd }>(
    '/internal/v1/batches/:id/submissions/:sub/end',
    { onRequest, schema: { params: submissionParams, body: endBody } },
    async (req, reply) => {
      if (!(await endSubmission(ctx.sql, req.params.id, req.params.sub, req.body.status))) throw Errors.noSuchBatch();
      return reply.status(204).send();
    },
  );

  app.post<{ Params: { id: string }; Body: LinesRead }>(
    '/internal/v1/batches/:id/lines',
    { onRequest, schema: { params: idParams, body: linesBody } },
    async (req): Promise<{ lines: ClaimedLine[] }> => {
      const body = req.body;
      const lines = await readLines(ctx.sql, req.params.id, 'line_nos' in body ? { lineNos: body.line_nos } : { submissionId: body.submission_id, after: body.after, limit: body.limit });
      if (lines === null) throw Errors.noSuchBatch();
      return { lines };
    },
  );
}
