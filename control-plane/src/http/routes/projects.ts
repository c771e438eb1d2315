import type { FastifyInstance } from 'fastify';
import { DEFAULT_RESPONSES_TTL_DAYS, MAX_MODEL_ALIASES, MAX_RESPONSES_TTL_DAYS, UNSUPPORTED_PARAMS_MODES } from '@gateway/shared';
import { principalOf } from '../../auth/require-auth.js';
import type { AppContext } from '../../context.js';
import { writeAudit } from '../../db/audit-writer.js';
import { insertProject, listProjects, ownersOf, policyOf, projectNamedLike, softDeleteProject, updateProject, type ProjectInput } from '../../db/projects.js';
import { purgeProjectCache } from '../../cache/purge-cache.js';
import { appendInvalidations } from '../../keys/invalidation-log.js';
import { withUsedTokens } from '../../quota/used-tokens.js';
import { projectAccess, projectNotFound } from '../project-access.js';
import { refuseTakenName } from '../project-names.js';
import { requestFacts } from '../request-facts.js';
import { mcpSettingSchema } from '../mcp-setting-schema.js';
import { cacheSettingSchema } from '../cache-setting-schema.js';
import { ERROR_RESPONSES, listOf, nameSchema, projectParams, ref } from '../schemas.js';

/**
 * Projects. Any account may create one and becomes its owner; a non-admin account sees only the
 * projects it belongs to. Names are unique among the projects an account owns, whatever their
 * case (409 CONFLICT naming the project that has the name). Deletion is soft and takes the project's keys with it, in Postgres first
 * (with an invalidation log entry) and then in the Redis projection, which also tells every proxy
 * to drop them.
 */
type ProjectBody = ProjectInput & { name: string };

const name = { ...nameSchema, description: `Project name. ${nameSchema.description}` } as const;
const quota = {
  type: ['integer', 'null'],
  minimum: 0,
  maximum: Number.MAX_SAFE_INTEGER,
  description: 'Token quota of the project; null (the default) means none.',
} as const;
const limit = (description: string) => ({ type: ['integer', 'null'], minimum: 0, maximum: 2_147_483_647, description }) as const;
const policyProperties = {
  quota_tokens: quota,
  quota_period: { type: 'string', enum: ['total', 'month'], description: 'What the quota counts: all time (default) or each calendar month (UTC).' },
  rate_limits: {
    type: 'object',
    additionalProperties: false,
    description: 'Per-minute limits, shared by every proxy; null means none. Fields left out are unchanged.',
    properties: {
      key_rpm: limit('Requests per minute per key.'),
      key_tpm: limit('Tokens per minute per key (prompt estimate plus max_tokens).'),
      project_rpm: limit('Requests per minute for the whole project.'),
      project_tpm: limit('Tokens per minute for the whole project.'),
    },
  },
  allowed_models: {
    type: ['array', 'null'],
    items: { type: 'string', minLength: 1, maxLength: 256 },
    maxItems: 1000,
    uniqueItems: true,
    description: 'Models the project may use; null means every routed model.',
  },
  max_tokens_cap: { type: ['integer', 'null'], minimum: 1, maximum: 2_147_483_647, description: 'Largest max_tokens a request may ask for; injected when a request sets none.' },
  mcp: mcpSettingSchema,
  max_n: { type: ['integer', 'null'], minimum: 1, maximum: 128, description: 'Most completions (`n`) one request may ask for; null means the default, 8.' },
  model_aliases: {
    type: ['object', 'null'],
    maxProperties: MAX_MODEL_ALIASES,
    propertyNames: { minLength: 1, maxLength: 256 },
    additionalProperties: { type: 'string', minLength: 1, maxLength: 256 },
    description: 'Model ids the project\'s clients ask for → the model ids they are served (an agent\'s default model sent to a cheaper one); null means none. Replaced as a whole.',
  },
  unsupported_params: {
    type: ['string', 'null'],
    enum: [...UNSUPPORTED_PARAMS_MODES, null],
    description:
      'A request translated between protocols, with a parameter that has no counterpart and only tunes the answer: `drop` it (named in `x-gateway-dropped-params`) or `refuse` the request (400 `UNSUPPORTED_PARAMETER`); null means the default, drop.',
  },
  responses: {
    type: ['object', 'null'],
    additionalProperties: false,
    required: ['ttl_days'],
    description: `How long the gateway keeps the project's Responses API state (stored responses and their conversations, for \`previous_response_id\` and \`GET /v1/responses/{id}\`); null means the default, ${DEFAULT_RESPONSES_TTL_DAYS} days.`,
    properties: {
      ttl_days: { type: 'integer', minimum: 1, maximum: MAX_RESPONSES_TTL_DAYS, description: `Days a stored response is kept after it was stored (1..${MAX_RESPONSES_TTL_DAYS}).` },
    },
  },
  cache: cacheSettingSchema,
} as const;

export function registerProjectRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.post<{ Body: ProjectBody }>(
    '/v1/projects',
    {
      config: { auditType: 'project.created' },
      schema: {
        tags: ['projects'],
        summary: 'Create a project; the caller becomes its owner',
        description: 'Names are unique among the projects an account owns, whatever their case: 409 CONFLICT names the project that has it.',
        body: { type: 'object', required: ['name'], additionalProperties: false, properties: { name, ...policyProperties } },
        response: { 201: ref('Project'), ...ERROR_RESPONSES },
      },
    },
    async (req, reply) => {
      const principal = principalOf(req);
      const project = await ctx.sql.begin(async (tx) => {
        refuseTakenName(await projectNamedLike(tx, req.body.name, [principal.userId]));
        const created = await insertProject(tx, { ...req.body, ownerId: principal.userId });
        await writeAudit(tx, { type: 'project.created', outcome: 'success', status: 201, projectId: created.id, actor: principal.userId, target: { type: 'project', id: created.id } }, requestFacts(req, reply));
        return created;
      });
      if (!(await ctx.projection.tryPutPolicy(policyOf(project)))) req.log.warn({ project_id: project.id }, 'project created while Redis is unreachable; its policy is projected at the next rebuild');
      return reply.status(201).send(await withUsedTokens(ctx, project));
    },
  );

  app.get(
    '/v1/projects',
    {
      schema: {
        tags: ['projects'],
        summary: "The caller's projects (every project for account admins)",
        response: { 200: listOf('Project'), ...ERROR_RESPONSES },
      },
    },
    async (req) => {
      const principal = principalOf(req);
      return { data: await withUsedTokens(ctx, await listProjects(ctx.sql, principal.role === 'admin' ? null : principal.userId)) };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/projects/:id',
    { schema: { tags: ['projects'], summary: 'One project', params: projectParams, response: { 200: ref('Project'), ...ERROR_RESPONSES } } },
    async (req) => withUsedTokens(ctx, (await projectAccess(ctx.sql, principalOf(req), req.params.id, 'project.read', 'read this project')).project),
  );

  app.patch<{ Params: { id: string }; Body: Partial<ProjectBody> }>(
    '/v1/projects/:id',
    {
      config: { auditType: 'project.updated' },
      schema: {
        tags: ['projects'],
        summary: 'Rename a project or change its quota, limits and models (project admins and owners); takes effect at once',
        params: projectParams,
        body: { type: 'object', minProperties: 1, additionalProperties: false, properties: { name, ...policyProperties } },
        response: { 200: ref('Project'), ...ERROR_RESPONSES },
      },
    },
    async (req, reply) => {
      const principal = principalOf(req);
      const updated = await ctx.sql.begin(async (tx) => {
        await projectAccess(tx, principal, req.params.id, 'project.update', 'change this project', { lock: 'update' });
        if (req.body.name !== undefined) refuseTakenName(await projectNamedLike(tx, req.body.name, await ownersOf(tx, req.params.id), req.params.id));
        const project = await updateProject(tx, req.params.id, req.body);
        if (project === null) throw projectNotFound();
        await writeAudit(tx, { type: 'project.updated', outcome: 'success', status: 200, projectId: project.id, actor: principal.userId, target: { type: 'project', id: project.id } }, requestFacts(req, reply));
        return project;
      });
      // Committed: while Redis is away the change waits for the rebuild after the reconnect, which
      // projects it and tells the proxies (they keep the policy they hold meanwhile).
      if (!(await ctx.projection.tryPutPolicy(policyOf(updated)))) req.log.warn({ project_id: updated.id }, 'project changed while Redis is unreachable; the change reaches the proxies at the next rebuild');
      const { used_tokens: _used, ...project } = updated;
      await ctx.webhooks.emit({ projectId: updated.id, type: 'project.updated', data: { project, changed: Object.keys(req.body), actor: principal.userId } });
      return withUsedTokens(ctx, updated);
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/v1/projects/:id',
    {
      config: { auditType: 'project.deleted' },
      schema: {
        tags: ['projects'],
        summary: 'Delete a project and all its keys (project owners)',
        params: projectParams,
        response: { 204: { type: 'null', description: 'Deleted.' }, ...ERROR_RESPONSES },
      },
    },
    async (req, reply) => {
      const principal = principalOf(req);
      const keyHashes = await ctx.sql.begin(async (tx) => {
        await projectAccess(tx, principal, req.params.id, 'project.delete', 'delete this project', { lock: 'update' });
        const deleted = await softDeleteProject(tx, req.params.id);
        if (deleted === null) throw projectNotFound();
        await writeAudit(tx, { type: 'project.deleted', outcome: 'success', status: 204, projectId: req.params.id, actor: principal.userId, target: { type: 'project', id: req.params.id } }, requestFacts(req, reply));
        // Last in the transaction: durable and announced (NOTIFY) together with the deletion.
        await appendInvalidations(tx, [{ kind: 'project.deleted', key_hash: null, key_id: null, project_id: req.params.id }]);
        return deleted.keyHashes;
      });
      ctx.invalidations.wake();
      // After the commit: a proxy that re-reads on the invalidation can only find the keys gone.
      // Bounded: with Redis away the log stream has carried the deletion already, and the next
      // projection rebuild removes the keys from Redis.
      if (!(await ctx.projection.tryRemoveProject(req.params.id, keyHashes))) {
        req.log.warn({ project_id: req.params.id }, 'project deleted while Redis is unreachable; the projection is repaired at the next rebuild');
      }
      // Its cached answers go with it rather than by their TTL; not waited for (the keys are gone
      // already, so no request can read them meanwhile).
      void purgeProjectCache(ctx.redis, ctx.keys, req.params.id).catch((err: Error) =>
        req.log.warn({ project_id: req.params.id, err: { message: err.message } }, "deleted project's cached answers not purged; they expire by their TTL"),
      );
      return reply.status(204).send();
    },
  );
}
