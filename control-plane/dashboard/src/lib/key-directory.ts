import type { ApiKey, List, Project } from '../api/types.js';
import type { ApiClient } from '../api/client.js';

/**
 * Key ids to names, from the keys lists: one project's, or in the all-projects view every listed
 * project's, fetched side by side. Deleted keys are not listed and stay ids. A project whose list
 * cannot be read (a role that may not) just contributes no names.
 */
export const MAX_PROJECTS_FOR_KEY_NAMES = 50;

export async function loadKeyDirectory(api: ApiClient, projectId: string | null, projects: readonly Project[]): Promise<Map<string, ApiKey>> {
  const ids = projectId !== null ? [projectId] : projects.slice(0, MAX_PROJECTS_FOR_KEY_NAMES).map((p) => p.id);
  const lists = await Promise.all(ids.map((id) => api.get<List<ApiKey>>(`/v1/projects/${id}/keys`).then((l) => l.data, () => [] as ApiKey[])));
  return new Map(lists.flat().map((k) => [k.id, k]));
}
