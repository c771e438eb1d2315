import type { FastifyInstance } from 'fastify';
import { Errors } from '@gateway/shared';
import { principalOf } from '../../auth/require-auth.js';
import { purgeProjectCache } from '../../cache/purge-cache.js';
import type { AppContext } from '../../context.js';
import { writeAudit } from '../../db/audit-writer.js';
import { projectCacheStats } from '../../db/cache-stats.js';
import { cacheSettingAnswer } from '../cache-setting-schema.js';
import { projectAccess } from '../project-access.js';
import { requestFacts } from '../request-facts.js';
import { ERROR_RESPONSES, projectParams } from '../schemas.js';

/**
 * `DELETE /v1/projects/{id}/cache`: the project's response-cache entries deleted from Redis
 * (cache/purge-cache.ts), by those who may change the project. Every proxy misses from the answer
 * on; a request already waiting on the provider may still store its answer afterwards.
 */
export function registerProjectCacheRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get<{ Params: { id: string } }>(
    '/v1/projects/:id/cache',
    {
      schema: {
        tags: ['projects'],
        summary: "The project's cache setting, hit rate and savings over the last 30 days",
        params: projectParams,
        response: {
          200: {
            type: 'object',
            required: ['cache', 'window_days', 'lookups', 'hits', 'hit_rate', 'saved_usd'],
            properties: {
              cache: cacheSettingAnswer,
              window_days: { type: 'integer' },
              lookups: { type: 'integer', description: 'Requests that looked the cache up (hits and misses).' },
              hits: { type: 'integer' },
              hit_rate: { type: ['number', 'null'], description: 'hits / lookups; null without lookups.' },
              saved_usd: { type: ['number', 'null'], description: 'US dollars the hits did not spend; null when none had a price.' },
            },
          },
          ...ERROR_RESPONSES,
        },
      },
    },
    async (req) => {
      const { project } = await projectAccess(ctx.sql, principalOf(req), req.params.id, 'project.read', 'read this project');
      return projectCacheStats(ctx.sql, project);
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/v1/projects/:id/cache',
    {
      config: { auditType: 'project.cache_purged' },
      schema: {
        tags: ['projects'],
        summary: "Purge the project's response cache (project admins and owners)",
        description: 'Deletes every cached answer of the project (docs/caching.md); the next identical request calls the provider again.',
        params: projectParams,
        response: {
          200: {
            type: 'object',
            required: ['purged'],
            properties: { purged: { type: 'integer', description: 'Entries deleted (expired ones still listed included).' } },
          },
          ...ERROR_RESPONSES,
        },
      },
    },
    async (req, reply) => {
      const principal = principalOf(req);
      await projectAccess(ctx.sql, principal, req.params.id, 'project.update', 'purge this project\'s cache');
      let purged: number;
      try {
        purged = await purgeProjectCache(ctx.redis, ctx.keys, req.params.id);
      } catch {
        throw Errors.cacheUnreachable();
      }
      // Proxies keep recent entries in memory too: the project.updated message makes them drop them.
      await ctx.projection.projectUpdated(req.params.id).catch(() => {});
      await writeAudit(ctx.sql, { type: 'project.cache_purged', outcome: 'success', status: 200, projectId: req.params.id, actor: principal.userId, target: { type: 'project', id: req.params.id } }, requestFacts(req, reply));
      return { purged };
    },
  );
}
