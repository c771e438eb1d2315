import type { FastifyInstance } from 'fastify';
import { Errors, type GatewayError, type StoredItems, type StoredResponseRecord, type StoredResponseWrite } from '@gateway/shared';
import type { AppContext } from '../../context.js';
import { deleteStoredResponse, getStoredItems, getStoredResponse, putStoredResponse } from '../../db/stored-responses.js';
import { requireInternalToken } from '../internal-token.js';

/**
 * The Responses API state the proxies keep (they never reach PostgreSQL themselves), for
 * `previous_response_id` and GET /v1/responses/{id}:
 * - PUT /internal/v1/responses/{id}: stores a response (again under the same id: replaces it),
 *   kept for the project's `responses.ttl_days` from now; 404 without a live project, 409 when the
 *   id is another project's (never moved);
 * - GET /internal/v1/responses/{id}?project_id=…: the stored response; 404 when there is none, it
 *   expired, or it is another project's;
 * - DELETE /internal/v1/responses/{id}?project_id=…: 204, or 404 as GET;
 * - GET /internal/v1/responses/items?project_id=…&id=…&id=…: the project's stored items of those
 *   ids (input or output items of its unexpired responses), `{v: 1, items: {id: item}}`, the ids
 *   not found left out (the Responses API's `item_reference`).
 * Authenticated with INTERNAL_TOKEN as a bearer token, before the body is read; not part of the
 * public /v1 API or its OpenAPI document.
 */

/** A stored response carries whole conversations (images as data URLs among them). */
const BODY_LIMIT = 32 * 1024 * 1024;
/**
 * The clients' own JSON (tool schemas, structured output) sits a few levels down in the body, and
 * the proxy lets each such value nest 64 levels deep.
 */
const MAX_JSON_DEPTH = 160;

const params = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', pattern: '^resp_[A-Za-z0-9_-]{1,200}$', description: 'The response id, `resp_…`.' } },
} as const;
const projectQuery = {
  type: 'object',
  required: ['project_id'],
  additionalProperties: false,
  properties: { project_id: { type: 'string', format: 'uuid' } },
} as const;
const body = {
  type: 'object',
  required: ['v', 'project_id', 'provider', 'model', 'input_items', 'response', 'messages'],
  additionalProperties: false,
  properties: {
    v: { type: 'integer', enum: [1] },
    project_id: { type: 'string', format: 'uuid' },
    provider: { type: ['string', 'null'], minLength: 1, maxLength: 256 },
    model: { type: 'string', minLength: 1, maxLength: 256 },
    input_items: { type: 'array' },
    response: { type: ['object', 'null'] },
    messages: { type: ['array', 'null'] },
  },
} as const;

const itemsQuery = {
  type: 'object',
  required: ['project_id', 'id'],
  additionalProperties: false,
  properties: {
    project_id: { type: 'string', format: 'uuid' },
    id: { type: 'array', minItems: 1, maxItems: 1_000, items: { type: 'string', minLength: 1, maxLength: 256 } },
  },
} as const;

function responseNotFound(): GatewayError {
  return Errors.noSuchStoredResponse();
}

export function registerInternalStoredResponseRoutes(app: FastifyInstance, ctx: AppContext): void {
  // onRequest, before the body is read: no token, no other answer than 401.
  const onRequest = async (req: Parameters<typeof requireInternalToken>[0]) => requireInternalToken(req, ctx);

  app.put<{ Params: { id: string }; Body: StoredResponseWrite }>(
    '/internal/v1/responses/:id',
    { onRequest, bodyLimit: BODY_LIMIT, config: { maxJsonDepth: MAX_JSON_DEPTH }, schema: { params, body } },
    async (req, reply) => {
      const { project_id, provider, model, input_items, response, messages } = req.body;
      let outcome;
      try {
        outcome = await ctx.sql.begin((tx) => putStoredResponse(tx, { id: req.params.id, project_id, provider, model, input_items, response, messages }));
      } catch (err) {
        // JSON PostgreSQL's jsonb cannot hold (a lone surrogate escape): the body's fault, not the server's.
        const code = (err as { code?: string }).code;
        if (code === '22P02' || code === '22P05') throw Errors.unstorableText();
        throw err;
      }
      if (outcome === 'no_project') throw Errors.noSuchProject('project_id');
      if (outcome === 'conflict') throw Errors.responseIdTaken();
      return reply.status(204).send();
    },
  );

  app.get<{ Querystring: { project_id: string; id: string[] } }>(
    '/internal/v1/responses/items',
    { onRequest, schema: { querystring: itemsQuery } },
    async (req): Promise<StoredItems> => ({ v: 1, items: await getStoredItems(ctx.sql, req.query.project_id, req.query.id) }),
  );

  app.get<{ Params: { id: string }; Querystring: { project_id: string } }>(
    '/internal/v1/responses/:id',
    { onRequest, schema: { params, querystring: projectQuery } },
    async (req): Promise<StoredResponseRecord> => {
      const row = await getStoredResponse(ctx.sql, req.params.id, req.query.project_id);
      if (row === null) throw responseNotFound();
      return {
        v: 1,
        id: row.id,
        project_id: row.project_id,
        provider: row.provider,
        model: row.model,
        input_items: row.input_items,
        response: row.response,
        messages: row.messages,
        created_at: row.created_at.toISOString(),
        expires_at: row.expires_at.toISOString(),
      };
    },
  );

  app.delete<{ Params: { id: string }; Querystring: { project_id: string } }>(
    '/internal/v1/responses/:id',
    { onRequest, schema: { params, querystring: projectQuery } },
    async (req, reply) => {
      if (!(await deleteStoredResponse(ctx.sql, req.params.id, req.query.project_id))) throw responseNotFound();
      return reply.status(204).send();
    },
  );
}
