import type { ApiKey, List } from '../api/types.js';
import type { ApiClient } from '../api/client.js';

/**
 * Key ids to names: one project's keys, or in the all-projects view the keys of every project the
 * account may read, in one request (GET /v1/keys). Deleted keys are not listed and stay ids. A list
 * that cannot be read just gives no names.
 */
export async function loadKeyDirectory(api: ApiClient, projectId: string | null): Promise<Map<string, ApiKey>> {
  const path = projectId !== null ? `/v1/projects/${projectId}/keys` : '/v1/keys';
  const keys = await api.get<List<ApiKey>>(path).then((l) => l.data, () => [] as ApiKey[]);
  return new Map(keys.map((k) => [k.id, k]));
}
