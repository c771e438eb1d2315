import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Errors, type FileComplete, type FileCreate, type FileLines, type FileRow } from '@gateway/shared';
import type { AppContext } from '../../context.js';
import { appendFileLines, completeFile, createFile, deleteFile, getFile, listFiles, uploadedFileText } from '../../db/batch-files.js';
import { batchResultText } from '../../db/batches.js';
import { requireInternalToken } from '../internal-token.js';

/**
 * The files of the Files and Batch APIs, kept for the proxies (they never reach PostgreSQL):
 * - POST /internal/v1/files: opens a file (`uploading`); 404 without a live project;
 * - POST /internal/v1/files/{id}/lines: adds numbered lines (sent again: nothing changes), 204;
 * - POST /internal/v1/files/{id}/complete: every line is in; the file becomes `processed`;
 * - GET /internal/v1/files?project_id=…: the project's processed files, a page at a time;
 * - GET /internal/v1/files/{id}?project_id=…, …/content: a file, its content streamed (JSON lines);
 * - DELETE /internal/v1/files/{id}?project_id=…: deletes it (an upload under way included).
 * Another project's, a deleted, or (to read) an uploading file is 404. Authenticated with
 * INTERNAL_TOKEN as a bearer token, before the body is read; not part of the public /v1 API or
 * its OpenAPI document.
 */

/** A page of lines of a batch file (up to a few thousand lines of a file of up to 200 MB). */
const LINES_BODY_LIMIT = 32 * 1024 * 1024;
const MAX_LINES_PER_CALL = 10_000;
/** Far above any batch (BATCH_MAX_LINES), far below the int4 its line numbers are stored as. */
const MAX_LINE_NO = 100_000_000;

/**
 * Ids are matched loosely: a client's id that was never made (the proxy passes it on) is a 404
 * "no such file", not a 400 about its shape.
 */
export const storedIdSchema = { type: 'string', pattern: '^[A-Za-z0-9_-]{1,200}$' } as const;

export const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: storedIdSchema },
} as const;

export const projectQuery = {
  type: 'object',
  required: ['project_id'],
  additionalProperties: false,
  properties: { project_id: { type: 'string', format: 'uuid' } },
} as const;

const createBody = {
  type: 'object',
  required: ['v', 'project_id', 'key_id', 'purpose', 'filename'],
  additionalProperties: false,
  properties: {
    v: { type: 'integer', enum: [1] },
    project_id: { type: 'string', format: 'uuid' },
    key_id: { type: 'string', format: 'uuid' },
    purpose: { type: 'string', enum: ['batch', 'batch_requests'] },
    filename: { type: 'string', minLength: 1, maxLength: 1024 },
  },
} as const;

const linesBody = {
  type: 'object',
  required: ['v', 'project_id', 'first_line', 'lines'],
  additionalProperties: false,
  properties: {
    v: { type: 'integer', enum: [1] },
    project_id: { type: 'string', format: 'uuid' },
    first_line: { type: 'integer', minimum: 0, maximum: MAX_LINE_NO },
    lines: { type: 'array', maxItems: MAX_LINES_PER_CALL, items: { type: 'string' } },
  },
} as const;

const completeBody = {
  type: 'object',
  required: ['v', 'project_id', 'bytes', 'line_count', 'endpoints'],
  additionalProperties: false,
  properties: {
    v: { type: 'integer', enum: [1] },
    project_id: { type: 'string', format: 'uuid' },
    bytes: { type: 'integer', minimum: 0 },
    line_count: { type: 'integer', minimum: 0, maximum: MAX_LINE_NO },
    endpoints: { type: 'object', additionalProperties: { type: 'integer', minimum: 0, maximum: MAX_LINE_NO } },
  },
} as const;

const listQuery = {
  type: 'object',
  required: ['project_id'],
  additionalProperties: false,
  properties: {
    project_id: { type: 'string', format: 'uuid' },
    purpose: { type: 'string', minLength: 1, maxLength: 64 },
    after: storedIdSchema,
    limit: { type: 'integer', minimum: 1, maximum: 10_000, default: 10_000 },
    order: { type: 'string', enum: ['asc', 'desc'], default: 'desc' },
  },
} as const;

/** Streams JSON lines as PostgreSQL's cursor hands them over; Readable.from pulls a page only when the client took the last. */
export function sendJsonLines(reply: FastifyReply, text: AsyncGenerator<string>): FastifyReply {
  void reply.header('content-type', 'application/jsonl').header('cache-control', 'no-store');
  return reply.send(Readable.from(text));
}

export function registerInternalFileRoutes(app: FastifyInstance, ctx: AppContext): void {
  // onRequest, before the body is read: no token, no other answer than 401.
  const onRequest = async (req: Parameters<typeof requireInternalToken>[0]) => requireInternalToken(req, ctx);

  app.post<{ Body: FileCreate }>('/internal/v1/files', { onRequest, schema: { body: createBody } }, async (req, reply) => {
    const { project_id, key_id, purpose, filename } = req.body;
    const file = await createFile(ctx.sql, { project_id, key_id, purpose, filename });
    if (file === null) throw Errors.noSuchProject('project_id');
    return reply.status(201).send(file);
  });

  app.post<{ Params: { id: string }; Body: FileLines }>(
    '/internal/v1/files/:id/lines',
    { onRequest, bodyLimit: LINES_BODY_LIMIT, schema: { params: idParams, body: linesBody } },
    async (req, reply) => {
      const { project_id, first_line, lines } = req.body;
      if (!(await appendFileLines(ctx.sql, req.params.id, project_id, first_line, lines))) throw Errors.noSuchFile();
      return reply.status(204).send();
    },
  );

  app.post<{ Params: { id: string }; Body: FileComplete }>(
    '/internal/v1/files/:id/complete',
    { onRequest, schema: { params: idParams, body: completeBody } },
    async (req): Promise<FileRow> => {
      const { project_id, bytes, line_count, endpoints } = req.body;
      const outcome = await ctx.sql.begin((tx) => completeFile(tx, req.params.id, project_id, { bytes, line_count, endpoints }));
      if (outcome === 'no_file') throw Errors.noSuchFile();
      if (outcome === 'lines_missing') throw Errors.batchFileNotUsable('its lines did not all arrive');
      return outcome.file;
    },
  );

  app.get<{ Querystring: { project_id: string; purpose?: string; after?: string; limit: number; order: 'asc' | 'desc' } }>(
    '/internal/v1/files',
    { onRequest, schema: { querystring: listQuery } },
    async (req) => {
      const { project_id, ...page } = req.query;
      return listFiles(ctx.sql, project_id, page);
    },
  );

  app.get<{ Params: { id: string }; Querystring: { project_id: string } }>(
    '/internal/v1/files/:id',
    { onRequest, schema: { params: idParams, querystring: projectQuery } },
    async (req): Promise<FileRow> => {
      const file = await getFile(ctx.sql, req.params.id, req.query.project_id);
      if (file === null) throw Errors.noSuchFile();
      return file;
    },
  );

  app.get<{ Params: { id: string }; Querystring: { project_id: string } }>(
    '/internal/v1/files/:id/content',
    { onRequest, schema: { params: idParams, querystring: projectQuery } },
    async (req, reply) => {
      const file = await getFile(ctx.sql, req.params.id, req.query.project_id);
      if (file === null) throw Errors.noSuchFile();
      // An output or error file holds no lines of its own: its content is its batch's results.
      if ((file.purpose === 'batch_output' || file.purpose === 'batch_error') && file.batch_id !== null) {
        return sendJsonLines(reply, batchResultText(ctx.sql, file.batch_id, file.purpose === 'batch_output' ? 'output' : 'error'));
      }
      return sendJsonLines(reply, uploadedFileText(ctx.sql, file.id));
    },
  );

  app.delete<{ Params: { id: string }; Querystring: { project_id: string } }>(
    '/internal/v1/files/:id',
    { onRequest, schema: { params: idParams, querystring: projectQuery } },
    async (req) => {
      if (!(await deleteFile(ctx.sql, req.params.id, req.query.project_id))) throw Errors.noSuchFile();
      return { id: req.params.id, deleted: true };
    },
  );
}
