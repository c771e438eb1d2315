import type { Fragment } from 'postgres';
import type { RecordTags } from '@gateway/shared';
import type { Queryable } from './connect.js';

/**
 * The cost-attribution filters shared by the record lists, the usage summary, series and export:
 * records carrying every tag given (jsonb containment, which the tags GIN index of migration
 * attribution_indexes serves) and of one end user.
 */
export interface AttributionFilter {
  /** Every one of these tags, each with this value. */
  tags?: RecordTags | undefined;
  endUser?: string | undefined;
}

export function attributionConditions(sql: Queryable, filter: AttributionFilter): Fragment[] {
  const conditions: Fragment[] = [];
  if (filter.tags !== undefined) conditions.push(sql`tags @> ${sql.json(filter.tags)}`);
  if (filter.endUser !== undefined) conditions.push(sql`end_user = ${filter.endUser}`);
  return conditions;
}
