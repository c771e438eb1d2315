import type { ProjectCacheStats, Project } from '@gateway/shared';
import type { Queryable } from './connect.js';
import { dollars } from './usage.js';

/** Days of records the project page's cache figures cover. */
export const CACHE_STATS_DAYS = 30;

/**
 * A project's response-cache figures over the last 30 days, from the records (docs/caching.md):
 * lookups and hits from the audit events' `cache` (a bypass is no lookup), savings from the hits'
 * usage records. Both read only the partitions of the window, by the project's index.
 */
export async function projectCacheStats(sql: Queryable, project: Project, now = Date.now()): Promise<ProjectCacheStats> {
  const since = now - CACHE_STATS_DAYS * 86_400_000;
  const [lookups] = await sql<{ lookups: number; hits: number }[]>`
    select count(*) filter (where cache in ('hit', 'miss'))::int as lookups, count(*) filter (where cache = 'hit')::int as hits
    from audit_events where project_id = ${project.id} and ts >= ${since} and type = 'gateway.request'`;
  const [saved] = await sql<{ saved: string | null }[]>`
    select sum(saved_usd)::text as saved from usage_records where project_id = ${project.id} and ts >= ${since} and cache_hit`;
  const total = lookups?.lookups ?? 0;
  const hits = lookups?.hits ?? 0;
  return { cache: project.cache, window_days: CACHE_STATS_DAYS, lookups: total, hits, hit_rate: total === 0 ? null : hits / total, saved_usd: dollars(saved?.saved ?? null) };
}
