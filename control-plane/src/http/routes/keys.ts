import type { FastifyInstance } from 'fastify';
import { Errors, generateApiKey, MAX_TAGS, tagsProblem, type GatewayError } from '@gateway/shared';
import { can } from '../../auth/permissions.js';
import { principalOf } from '../../auth/require-auth.js';
import type { AppContext } from '../../context.js';
import { writeAudit } from '../../db/audit-writer.js';
import { findKey, insertKey, isKeyLive, listKeys, listKeysOfVisibleProjects, markKeyDeleted, type StoredKey } from '../../db/keys.js';
import { appendInvalidations } from '../../keys/invalidation-log.js';
import { forbidden, projectAccess } from '../project-access.js';
import { requestFacts } from '../request-facts.js';
import { ERROR_RESPONSES, dateTimeSchema, listOf, nameSchema, projectParams, ref, uuidSchema } from '../schemas.js';

/**
 * Project API keys. The secret exists in one response only, the creation's; Postgres keeps its
 * SHA-256 and display prefix. Every change is written to Postgres (the truth) first and then to
 * the Redis projection, which publishes the invalidation that makes every proxy act at once. A
 * deletion is also appended to the invalidation log in its own transaction: once it commits, the
 * proxies following the log hear of it even while Redis is away, so the DELETE waits for Redis
 * only briefly (KeyProjection.tryRemove) and the next projection rebuild finishes the Redis side.
 */
interface NewKeyBody {
  name: string;
  expires_at?: string | null;
  tags?: Record<string, string>;
}

const keyParams = {
  type: 'object',
  required: ['id', 'key_id'],
  additionalProperties: false,
  properties: { id: { ...uuidSchema, description: 'Project id.' }, key_id: { ...uuidSchema, description: 'Key id.' } },
} as const;

export function registerKeyRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.post<{ Params: { id: string }; Body: NewKeyBody }>(
    '/v1/projects/:id/keys',
    {
      config: { auditType: 'key.created' },
      schema: {
        tags: ['keys'],
        summary: 'Create an API key; the response is the only time the secret is shown',
        params: projectParams,
        body: {
          type: 'object',
          required: ['name'],
          additionalProperties: false,
          properties: {
            name: { ...nameSchema, description: `Key name, to recognise it by. ${nameSchema.description}` },
            expires_at: { ...dateTimeSchema, type: ['string', 'null'], description: 'When the key stops working (RFC 3339); null or absent: never.' },
            tags: {
              type: 'object',
              additionalProperties: { type: 'string' },
              description: `Default cost-attribution tags of the key's requests, e.g. {"team": "search"}: at most ${MAX_TAGS}, keys of 1-32 characters [a-z0-9_.-], values of 1-64 [A-Za-z0-9_.:-]. A request's x-gateway-tags win per tag key.`,
            },
          },
        },
        response: { 201: ref('NewApiKey'), ...ERROR_RESPONSES },
      },
    },
    async (req, reply) => {
      const principal = principalOf(req);
      const expiresAt = req.body.expires_at ? new Date(req.body.expires_at) : null;
      const tags = req.body.tags ?? {};
      const tagsWrong = tagsProblem(tags);
      if (tagsWrong !== null) throw Errors.badKeyTags(tagsWrong);
      if (expiresAt !== null && expiresAt.getTime() <= Date.now()) {
        throw Errors.expiryInPast();
      }
      // A key the proxies cannot look up is no key: while Redis is away, say so at once rather
      // than create it and wait.
      if (!ctx.projection.reachable) throw Errors.keysUncreatable();
      const generated = generateApiKey();
      const facts = requestFacts(req, reply);
      const key = await ctx.sql.begin(async (tx) => {
        // A share lock: a project deletion waits for this key to commit, and then takes it along.
        await projectAccess(tx, principal, req.params.id, 'key.create', 'create keys', { lock: 'share' });
        const created = await insertKey(tx, {
          projectId: req.params.id,
          name: req.body.name,
          prefix: generated.prefix,
          keyHash: generated.hash,
          createdBy: principal.userId,
          expiresAt,
          tags,
        });
        await writeAudit(tx, { type: 'key.created', outcome: 'success', status: 201, projectId: created.project_id, keyId: created.id, actor: principal.userId, target: { type: 'key', id: created.id } }, facts);
        return created;
      });
      if (!(await ctx.projection.tryPut({ id: key.id, project_id: key.project_id, key_hash: key.key_hash, expires_at: expiresAt?.getTime() ?? null, tags: key.tags }))) {
        // A key the proxies cannot see must not look created: take it back and say so. Logged as
        // a deletion, since part of the projection may have reached Redis (or may still: the
        // removal queued behind the put on the same connection lands after it).
        await ctx.sql.begin(async (tx) => {
          if (await markKeyDeleted(tx, key.project_id, key.id)) await appendInvalidations(tx, [deletionEntry(key)]);
        });
        ctx.invalidations.wake();
        void ctx.projection.remove(key).catch(() => {});
        req.log.error({ key_id: key.id }, 'key projection failed or timed out; key withdrawn');
        throw Errors.keyNotPublished();
      }
      // A deletion of the key or its project that committed meanwhile may have cleaned the
      // projection before this put landed: check again, so a dead key is never left projected.
      if (!(await isKeyLive(ctx.sql, key.id))) {
        await ctx.projection.remove(key);
        throw Errors.projectDeletedDuringKeyCreation();
      }
      // Only now that the key is live everywhere: a key withdrawn above was never created.
      await ctx.webhooks.emit({ projectId: key.project_id, type: 'key.created', data: { project_id: key.project_id, key: keyFacts(key), actor: principal.userId } });
      return reply.status(201).send({
        id: key.id,
        project_id: key.project_id,
        name: key.name,
        prefix: key.prefix,
        key: generated.key,
        created_at: key.created_at,
        expires_at: key.expires_at,
        tags: key.tags,
      });
    },
  );

  app.get<{ Params: { id: string }; Querystring: { include_deleted: boolean } }>(
    '/v1/projects/:id/keys',
    {
      schema: {
        tags: ['keys'],
        summary: "The project's keys (never their secrets)",
        params: projectParams,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            include_deleted: { type: 'boolean', default: false, description: 'Also list deleted keys (their `deleted_at` is set), for the key history.' },
          },
        },
        response: { 200: listOf('ApiKey'), ...ERROR_RESPONSES },
      },
    },
    async (req) => {
      await projectAccess(ctx.sql, principalOf(req), req.params.id, 'project.read', 'read this project');
      return { data: (await listKeys(ctx.sql, req.params.id, { includeDeleted: req.query.include_deleted })).map(publicKey) };
    },
  );

  // One request for the key names of every project a caller sees (the dashboard's "All projects").
  app.get<{ Querystring: { include_deleted: boolean } }>(
    '/v1/keys',
    {
      schema: {
        tags: ['keys'],
        summary: 'The keys of every project the caller may read, in one list (never their secrets)',
        description: 'An account admin gets the keys of every project, anyone else those of the projects they are a member of. Keys of deleted projects are left out.',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            include_deleted: { type: 'boolean', default: false, description: 'Also list deleted keys (their `deleted_at` is set).' },
          },
        },
        response: { 200: listOf('ApiKey'), ...ERROR_RESPONSES },
      },
    },
    async (req) => {
      const principal = principalOf(req);
      const keys = await listKeysOfVisibleProjects(ctx.sql, principal.role === 'admin' ? null : principal.userId, { includeDeleted: req.query.include_deleted });
      return { data: keys.map(publicKey) };
    },
  );

  app.delete<{ Params: { id: string; key_id: string } }>(
    '/v1/projects/:id/keys/:key_id',
    {
      config: { auditType: 'key.deleted' },
      schema: {
        tags: ['keys'],
        summary: 'Delete a key: every proxy refuses it at once, including requests in flight',
        description: 'Project admins and owners delete any key; members delete the keys they created.',
        params: keyParams,
        response: { 204: { type: 'null', description: 'Deleted.' }, ...ERROR_RESPONSES },
      },
    },
    async (req, reply) => {
      const principal = principalOf(req);
      const { role } = await projectAccess(ctx.sql, principal, req.params.id, 'project.read', 'read this project');
      const key = await findKey(ctx.sql, req.params.id, req.params.key_id);
      if (key === null) throw keyNotFound();
      const mayDelete = can(role, 'key.delete_any') || (key.created_by === principal.userId && can(role, 'key.delete_own'));
      if (!mayDelete) throw forbidden(role, "delete another member's key");
      if (key.deleted) {
        // Already gone in Postgres. Removing it from the projection again costs nothing and
        // finishes a deletion whose Redis step was cut short.
        await ctx.projection.tryRemove(key);
        throw keyNotFound();
      }
      const deletedNow = await ctx.sql.begin(async (tx) => {
        if (!(await markKeyDeleted(tx, key.project_id, key.id))) return false;
        await writeAudit(tx, { type: 'key.deleted', outcome: 'success', status: 204, projectId: key.project_id, keyId: key.id, actor: principal.userId, target: { type: 'key', id: key.id } }, requestFacts(req, reply));
        // Last in the transaction: durable and announced (NOTIFY) together with the deletion.
        await appendInvalidations(tx, [deletionEntry(key)]);
        return true;
      });
      ctx.invalidations.wake();
      // Bounded: with Redis away the log stream has carried the deletion already.
      if (!(await ctx.projection.tryRemove(key))) req.log.warn({ key_id: key.id }, 'key deleted while Redis is unreachable; the projection is repaired at the next rebuild');
      if (!deletedNow) throw keyNotFound();
      await ctx.webhooks.emit({ projectId: key.project_id, type: 'key.deleted', data: { project_id: key.project_id, key: keyFacts(key), actor: principal.userId } });
      return reply.status(204).send();
    },
  );
}

function deletionEntry(key: StoredKey) {
  return { kind: 'key.deleted' as const, key_hash: key.key_hash, key_id: key.id, project_id: key.project_id };
}

function keyNotFound(): GatewayError {
  return Errors.noSuchKey();
}

/** A key as webhook events describe it: what identifies it, never its hash. */
function keyFacts(key: StoredKey) {
  return { id: key.id, name: key.name, prefix: key.prefix, created_by: key.created_by, created_at: key.created_at, expires_at: key.expires_at };
}

function publicKey(key: StoredKey) {
  const { key_hash: _hash, deleted: _deleted, ...rest } = key;
  return rest;
}
