import type { Project, ProjectCacheStats } from '../api/types.js';
import { useApi } from '../auth/session-context.js';
import { formatCost, formatNumber, formatShare } from '../lib/format.js';
import { useAsync } from '../lib/use-async.js';

/**
 * The project card's response-cache line (docs/caching.md): the setting, and for a project that
 * caches, the hit rate and the dollars saved over the last 30 days (GET /v1/projects/{id}/cache).
 * A project with the cache off asks the API nothing.
 */
export function CacheFigures({ project }: { project: Project }) {
  const cache = project.cache ?? { mode: 'off', ttl_seconds: 3600 };
  if (cache.mode === 'off') return <>off</>;
  return (
    <>
      exact, answers kept {describeTtl(cache.ttl_seconds)}
      <CacheStats projectId={project.id} />
    </>
  );
}

function CacheStats({ projectId }: { projectId: string }) {
  const api = useApi();
  const stats = useAsync(() => api.get<ProjectCacheStats>(`/v1/projects/${projectId}/cache`), [projectId]);
  if (stats.data === undefined) return null;
  const { lookups, hits, saved_usd: saved, window_days: days } = stats.data;
  return (
    <span class="muted">
      {' '}
      · {lookups === 0 ? 'no lookups' : `${formatShare(hits, lookups)} hits (${formatNumber(hits)} of ${formatNumber(lookups)})`}, {formatCost(saved ?? 0)} saved in {days} days
    </span>
  );
}

function describeTtl(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400} d`;
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}
