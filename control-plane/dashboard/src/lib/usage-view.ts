import { FINISH_REASONS, type FinishReason } from '../api/types.js';
import { isUuid, type RangeChoice } from './record-query.js';
import { choiceParam, rangeFromQuery, rangeToParams, textParam, type Params } from './url-filters.js';

/**
 * What the usage page shows, as read from and written to its address: the range, the filters and
 * which breakdown is open. The project is the picker's own `project` parameter.
 */
export const BREAKDOWNS = ['model', 'provider', 'key', 'project'] as const;
export type Breakdown = (typeof BREAKDOWNS)[number];

export const BREAKDOWN_LABELS: Record<Breakdown, string> = { model: 'Model', provider: 'Provider', key: 'Key', project: 'Project' };

export interface UsageView {
  range: RangeChoice;
  model: string;
  provider: string;
  finish_reason: FinishReason | '';
  key_id: string;
  breakdown: Breakdown;
}

export const DEFAULT_RANGE = '24h' as const;

export function usageViewFromQuery(query: URLSearchParams, now: number): UsageView {
  const key = textParam(query, 'key', 36);
  return {
    range: rangeFromQuery(query, now, DEFAULT_RANGE),
    model: textParam(query, 'model'),
    provider: textParam(query, 'provider'),
    finish_reason: choiceParam(query, 'finish_reason', FINISH_REASONS),
    key_id: isUuid(key) ? key : '',
    breakdown: choiceParam(query, 'by', BREAKDOWNS) || 'model',
  };
}

export function usageViewToParams(view: UsageView): Params {
  return {
    ...rangeToParams(view.range, DEFAULT_RANGE),
    model: view.model.trim(),
    provider: view.provider.trim(),
    finish_reason: view.finish_reason,
    key: view.key_id,
    by: view.breakdown === 'model' ? undefined : view.breakdown,
  };
}

/** The filters beyond the range and project: what "Clear filters" clears. */
export function activeFilterCount(view: UsageView): number {
  return [view.model, view.provider, view.finish_reason, view.key_id].filter((v) => v !== '').length;
}

export function withoutFilters(view: UsageView): UsageView {
  return { ...view, model: '', provider: '', finish_reason: '', key_id: '' };
}
