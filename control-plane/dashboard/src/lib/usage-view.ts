import { FINISH_REASONS, type FinishReason } from '../api/types.js';
import { isUuid, type RangeChoice } from './record-query.js';
import { choiceParam, rangeFromQuery, rangeToParams, textParam, type Params } from './url-filters.js';

/**
 * What the usage page shows, as read from and written to its address: the range, the filters and
 * which breakdown is open. The project is the picker's own `project` parameter.
 */
export const BREAKDOWNS = ['model', 'provider', 'key', 'project', 'end_user', 'tag'] as const;
export type Breakdown = (typeof BREAKDOWNS)[number];

export const BREAKDOWN_LABELS: Record<Breakdown, string> = { model: 'Model', provider: 'Provider', key: 'Key', project: 'Project', end_user: 'End user', tag: 'Tag' };

/** The tag key the Tag breakdown sums over when the address names none. */
export const DEFAULT_TAG_KEY = 'team';

/** The summary's `group_by` for a breakdown: the Tag breakdown groups by one tag key's values. */
export function groupByOf(breakdown: Breakdown, tagKey: string): string {
  return breakdown === 'tag' ? `tag:${tagKey}` : breakdown;
}

export interface UsageView {
  range: RangeChoice;
  model: string;
  provider: string;
  finish_reason: FinishReason | '';
  key_id: string;
  /** A tag filter as `key=value`; '' for none. */
  tag: string;
  end_user: string;
  breakdown: Breakdown;
  /** The tag key of the Tag breakdown. */
  tag_key: string;
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
    tag: textParam(query, 'tag', 100),
    end_user: textParam(query, 'end_user', 128),
    breakdown: choiceParam(query, 'by', BREAKDOWNS) || 'model',
    tag_key: /^[a-z0-9_.-]{1,32}$/.test(textParam(query, 'tag_key')) ? textParam(query, 'tag_key') : DEFAULT_TAG_KEY,
  };
}

export function usageViewToParams(view: UsageView): Params {
  return {
    ...rangeToParams(view.range, DEFAULT_RANGE),
    model: view.model.trim(),
    provider: view.provider.trim(),
    finish_reason: view.finish_reason,
    key: view.key_id,
    tag: view.tag.trim(),
    end_user: view.end_user.trim(),
    by: view.breakdown === 'model' ? undefined : view.breakdown,
    tag_key: view.breakdown === 'tag' && view.tag_key !== DEFAULT_TAG_KEY ? view.tag_key : undefined,
  };
}

/** The filters beyond the range and project: what "Clear filters" clears. */
export function activeFilterCount(view: UsageView): number {
  return [view.model, view.provider, view.finish_reason, view.key_id, view.tag, view.end_user].filter((v) => v !== '').length;
}

export function withoutFilters(view: UsageView): UsageView {
  return { ...view, model: '', provider: '', finish_reason: '', key_id: '', tag: '', end_user: '' };
}
