import { AUDIT_OUTCOMES, type AuditOutcome } from '../api/types.js';
import type { RangeChoice } from './record-query.js';
import { choiceParam, rangeFromQuery, rangeToParams, textParam, type Params } from './url-filters.js';

/** The audit page's filters as its address holds them (see url-filters.ts). */
export interface AuditView {
  range: RangeChoice;
  outcome: AuditOutcome | '';
  type: string;
}

/** A week: an audit trail is read back further than a day of traffic. */
export const AUDIT_DEFAULT_RANGE = '7d' as const;

export function auditViewFromQuery(query: URLSearchParams, now: number): AuditView {
  return {
    range: rangeFromQuery(query, now, AUDIT_DEFAULT_RANGE),
    outcome: choiceParam(query, 'outcome', AUDIT_OUTCOMES),
    type: textParam(query, 'type', 100),
  };
}

export function auditViewToParams(view: AuditView): Params {
  return { ...rangeToParams(view.range, AUDIT_DEFAULT_RANGE), outcome: view.outcome, type: view.type.trim() };
}

export function auditFilterCount(view: AuditView): number {
  return [view.outcome, view.type].filter((v) => v !== '').length;
}
