import { describe, expect, it } from 'vitest';
import { withParams } from '../../dashboard/src/lib/url-filters.js';
import { activeFilterCount, groupByOf, usageViewFromQuery, usageViewToParams, withoutFilters } from '../../dashboard/src/lib/usage-view.js';

/** The usage page's tag and end-user filters and breakdowns, as its address holds them. */
const NOW = Date.UTC(2026, 10, 26, 12);

describe('usage view: tags and end users', () => {
  it('round-trips the tag and end-user filters and the tag breakdown key', () => {
    const query = new URLSearchParams({ tag: 'team=search', end_user: 'alice', by: 'tag', tag_key: 'feature' });
    const view = usageViewFromQuery(query, NOW);
    expect(view).toMatchObject({ tag: 'team=search', end_user: 'alice', breakdown: 'tag', tag_key: 'feature' });
    expect(activeFilterCount(view)).toBe(2);
    expect(groupByOf(view.breakdown, view.tag_key)).toBe('tag:feature');
    const again = new URL(withParams('/usage', new URLSearchParams(), usageViewToParams(view)), 'http://x').searchParams;
    expect(usageViewFromQuery(again, NOW)).toEqual(view);
    expect(withoutFilters(view)).toMatchObject({ tag: '', end_user: '', breakdown: 'tag' });
  });

  it('defaults the tag key, refuses an unreadable one, and groups other breakdowns by their name', () => {
    expect(usageViewFromQuery(new URLSearchParams({ by: 'tag' }), NOW).tag_key).toBe('team');
    expect(usageViewFromQuery(new URLSearchParams({ by: 'tag', tag_key: 'Not A Key' }), NOW).tag_key).toBe('team');
    expect(groupByOf('end_user', 'team')).toBe('end_user');
    expect(groupByOf('model', 'team')).toBe('model');
    expect(usageViewToParams(usageViewFromQuery(new URLSearchParams({ by: 'model', tag_key: 'feature' }), NOW)).tag_key).toBeUndefined();
  });
});
