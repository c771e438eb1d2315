import type { SummaryFigures, UsageSummary } from '../api/types.js';
import type { ApiClient } from '../api/client.js';

/** Each key's requests and tokens over the last 24 hours and the last 30 days, by key id. */
export interface KeyUsage {
  day: Map<string, SummaryFigures>;
  month: Map<string, SummaryFigures>;
}

const HOUR = 3_600_000;

/** Two sums the database makes (GET /v1/usage/summary, group_by=key), not a walk over records. */
export async function loadKeyUsage(api: ApiClient, projectId: string, now: number): Promise<KeyUsage> {
  const sum = (hours: number) =>
    api
      .get<UsageSummary<'key'>>('/v1/usage/summary', { project_id: projectId, group_by: 'key', from: now - hours * HOUR, to: now + 60_000 })
      .then((s) => new Map(s.data.map((row) => [row.key, row] as const)));
  const [day, month] = await Promise.all([sum(24), sum(24 * 30)]);
  return { day, month };
}
