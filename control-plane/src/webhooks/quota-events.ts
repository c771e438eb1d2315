import type { Db } from '../db/connect.js';
import { recordEvent, type RecordedEvent } from './event-outbox.js';
import { newEventId } from './signing.js';

/**
 * quota.threshold: the writer inserts a quota_thresholds row in the transaction whose usage
 * records took the project to 80 or 100 % of its quota (batch-writer.ts); the row's primary key
 * makes that happen once per project, period, threshold and quota, whichever writer got there.
 * This turns a row into its event, once: setting event_id and making the event commit together.
 */
export interface QuotaCrossing {
  project_id: string;
  period: string;
  threshold: number;
  quota_tokens: string;
}

export async function announceCrossing(db: Db, crossing: QuotaCrossing): Promise<RecordedEvent | null> {
  return db.begin(async (tx) => {
    const id = newEventId();
    const [row] = await tx<{ used_tokens: string; crossed_at: Date }[]>`
      update quota_thresholds set event_id = ${id}
      where project_id = ${crossing.project_id} and period = ${crossing.period} and threshold = ${crossing.threshold}::smallint
        and quota_tokens = ${crossing.quota_tokens}::bigint and event_id is null
      returning used_tokens::text as used_tokens, crossed_at`;
    if (row === undefined) return null;
    return recordEvent(tx, {
      id,
      projectId: crossing.project_id,
      type: 'quota.threshold',
      occurredAt: row.crossed_at,
      data: {
        project_id: crossing.project_id,
        threshold: crossing.threshold,
        quota_period: crossing.period === 'total' ? 'total' : 'month',
        // `m202611` → `2026-11`
        period: crossing.period === 'total' ? 'total' : `${crossing.period.slice(1, 5)}-${crossing.period.slice(5, 7)}`,
        quota_tokens: Number(crossing.quota_tokens),
        used_tokens: Number(row.used_tokens),
      },
    });
  });
}
