import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { Page, UsageRecord, UsageSeriesAnswer, UsageSummary } from '../api/types.js';
import { useApi } from '../auth/session-context.js';
import { ErrorBanner } from '../components/error-banner.js';
import { PageHeading } from '../components/page-heading.js';
import { currentCursor, firstPage, Pager, type PagerState } from '../components/pager.js';
import { ProjectPicker, useProjects, useSelectedProject } from '../components/projects-context.js';
import '../components/record-views.css';
import { useToasts } from '../components/toasts.js';
import { UsageChart } from '../components/usage-chart.js';
import { loadKeyDirectory } from '../lib/key-directory.js';
import { presetChoice, resolveRange, toQueryString, type TimeRange } from '../lib/record-query.js';
import { navigate, useLocation } from '../lib/router.js';
import { followDownloadLink } from '../lib/save-file.js';
import { localOffsetMs } from '../lib/time-zone.js';
import { withParams } from '../lib/url-filters.js';
import { useAsync } from '../lib/use-async.js';
import { pickBucketMs, seriesFromPoints } from '../lib/usage-series.js';
import { activeFilterCount, BREAKDOWNS, DEFAULT_RANGE, groupByOf, usageViewFromQuery, usageViewToParams, withoutFilters, type Breakdown, type UsageView } from '../lib/usage-view.js';
import { UsageBreakdown, type BreakdownRow } from './usage-breakdown.js';
import { UsageFiltersForm } from './usage-filters-form.js';
import { UsageRecordsTable } from './usage-records-table.js';
import { UsageTotals } from './usage-totals.js';

/**
 * Usage of one project or all: the totals of a time range with their cost, a breakdown by model,
 * provider, key or project (all summed by the API over the whole range), a chart of tokens over
 * time, the records page by page, and a CSV export of every record the filters select. The
 * filters live in the address (lib/usage-view.ts). Every figure, the chart's buckets included, is
 * summed by the database over the whole range; only the records table reads records.
 */
const PAGE_SIZES = [25, 50, 100, 200];

export function UsagePage() {
  const api = useApi();
  const notify = useToasts();
  const projects = useProjects();
  const selected = useSelectedProject({ required: false });
  const projectId = selected.projectId;
  const allProjects = projectId === null;
  const { path, query } = useLocation();
  const queryText = query.toString();

  const view = useMemo(() => usageViewFromQuery(query, Date.now()), [queryText]);
  const [tick, setTick] = useState(0);
  /** A preset slides with the clock: resolved again on every Refresh. */
  const range: TimeRange = useMemo(() => {
    const resolved = resolveRange(view.range, Date.now());
    return 'problem' in resolved ? (resolveRange(presetChoice(DEFAULT_RANGE, Date.now()), Date.now()) as TimeRange) : resolved;
  }, [queryText, tick]);

  const [draft, setDraft] = useState<UsageView>(view);
  const [problem, setProblem] = useState<string | null>(null);
  // The form follows the address (Back, Forward, a link), but a project switch keeps unapplied edits.
  const viewKey = JSON.stringify(usageViewToParams(view));
  useEffect(() => {
    setDraft(view);
    setProblem(null);
  }, [viewKey]);

  const go = (next: UsageView, options: { replace?: boolean } = {}) => navigate(withParams(path, query, usageViewToParams(next)), options);

  // Another project's keys mean nothing here: a key filter goes when the project changes.
  const shownProject = useRef(projectId);
  useEffect(() => {
    if (shownProject.current === projectId) return;
    shownProject.current = projectId;
    if (view.key_id !== '') go({ ...view, key_id: '' }, { replace: true });
  }, [projectId]);

  const breakdownChoices: Breakdown[] = BREAKDOWNS.filter((b) => b !== 'project' || allProjects);
  const breakdown: Breakdown = breakdownChoices.includes(view.breakdown) ? view.breakdown : 'model';

  const filterQuery = {
    project_id: projectId,
    model: view.model,
    provider: view.provider,
    finish_reason: view.finish_reason,
    key_id: allProjects ? '' : view.key_id,
    tag: view.tag,
    end_user: view.end_user,
    from: range.from,
    to: range.to,
  };
  const filterKey = JSON.stringify(filterQuery);
  const scopeKey = JSON.stringify([projectId, range.from, range.to]);

  const keys = useAsync(() => loadKeyDirectory(api, projectId), [projectId]);
  const keyMap = keys.data ?? new Map();

  // The choices come from the whole range of the project, not from what the other filters leave.
  const modelChoices = useAsync(
    () => api.get<UsageSummary<'model'>>('/v1/usage/summary', { project_id: projectId, from: range.from, to: range.to, group_by: 'model' }).then((s) => s.data.map((d) => d.model)),
    [scopeKey],
  );
  const providerChoices = useAsync(
    () =>
      api.get<UsageSummary<'provider'>>('/v1/usage/summary', { project_id: projectId, from: range.from, to: range.to, group_by: 'provider' }).then((s) => s.data.map((d) => d.provider)),
    [scopeKey],
  );

  const groupBy = groupByOf(breakdown, view.tag_key);
  const summary = useAsync(() => api.get<UsageSummary<Breakdown>>('/v1/usage/summary', { ...filterQuery, group_by: groupBy }), [filterKey, groupBy, tick]);

  // The database sums per bucket: every record of the range counts, however many there are.
  const chart = useAsync(async () => {
    const bucketMs = pickBucketMs(range.to - range.from);
    const offsetMs = localOffsetMs(range.from);
    const answer = await api.get<UsageSeriesAnswer>('/v1/usage/series', { ...filterQuery, bucket_ms: bucketMs, offset_ms: offsetMs, group_by: 'model' });
    return { series: seriesFromPoints(answer.data, range.from, range.to, bucketMs, offsetMs) };
  }, [filterKey, tick]);

  // The pager belongs to one set of filters: new filters start again from the first page.
  const [pagerOf, setPagerOf] = useState<{ key: string; state: PagerState }>({ key: filterKey, state: firstPage() });
  // Compared by cursor, not identity: the fallback first page is a fresh object on every render.
  const pager = pagerOf.key === filterKey ? pagerOf.state : firstPage();
  const setPager = (state: PagerState) => setPagerOf({ key: filterKey, state });
  const [pageSize, setPageSize] = useState(50);
  const page = useAsync(
    () => api.get<Page<UsageRecord>>('/v1/usage', { ...filterQuery, order_desc: 'timestamp', limit: pageSize, cursor: currentCursor(pager) }),
    [filterKey, pager.stack.length, currentCursor(pager), pageSize, tick],
  );

  const apply = () => {
    const resolved = resolveRange(draft.range, Date.now());
    if ('problem' in resolved) return setProblem(resolved.problem);
    setProblem(null);
    go(draft);
    setTick((t) => t + 1);
  };
  const reset = () => go({ ...withoutFilters(view), range: presetChoice(DEFAULT_RANGE, Date.now()), breakdown: 'model' });
  const clearFilters = () => go(withoutFilters(view));
  const refresh = () => {
    setPager(firstPage());
    setTick((t) => t + 1);
  };
  const narrow = (by: Breakdown, value: string) => {
    if (by === 'model') go({ ...view, model: value, breakdown: 'provider' });
    else if (by === 'provider') go({ ...view, provider: value, breakdown: 'model' });
    else if (by === 'end_user') go({ ...view, end_user: value, breakdown: 'model' });
    else if (by === 'tag') go({ ...view, tag: `${view.tag_key}=${value}`, breakdown: 'model' });
    else if (by === 'project') navigate(withParams(path, query, { ...usageViewToParams({ ...view, breakdown: 'key' }), project: value }));
    else {
      const key = keyMap.get(value);
      const params = usageViewToParams({ ...view, key_id: value, breakdown: 'model' });
      navigate(withParams(path, query, key === undefined ? params : { ...params, project: key.project_id }));
    }
  };

  const [exporting, setExporting] = useState(false);
  const [exportError, setExportError] = useState<unknown>(null);
  const exportCsv = async () => {
    if (exporting) return;
    setExporting(true);
    setExportError(null);
    try {
      // A one-minute link the browser follows itself, so the file streams to disk (save-file.ts).
      const link = await api.post<{ url: string }>('/v1/usage/export/links', {});
      followDownloadLink(`${link.url}${toQueryString(filterQuery).replace(/^\?/, '&')}`);
      notify('Export started: the file downloads in the browser.');
    } catch (err) {
      setExportError(err);
    } finally {
      setExporting(false);
    }
  };

  const sums = summary.error ? undefined : summary.data;
  const filtered = activeFilterCount(view) > 0;
  const series = chart.data?.series;
  const records = page.data?.data;

  return (
    <>
      <PageHeading title="Usage">
        <ProjectPicker selected={selected} allowAll />
      </PageHeading>

      <UsageFiltersForm
        draft={draft}
        onDraft={setDraft}
        onApply={apply}
        onReset={reset}
        onRefresh={refresh}
        choices={{ models: modelChoices.data ?? [], providers: providerChoices.data ?? [], keys: allProjects ? [] : [...keyMap.values()] }}
        projectChosen={!allProjects}
        problem={problem}
      />

      <UsageTotals
        range={range}
        sums={sums}
        loading={summary.loading}
        error={summary.error}
        filtered={filtered}
        onRetry={() => summary.reload()}
        onClearFilters={clearFilters}
        onWiden={view.range.preset === '30d' ? null : () => go({ ...view, range: presetChoice('30d', Date.now()) })}
      />

      {sums !== undefined && sums.totals.requests > 0 && (
        <>
          <UsageBreakdown
            breakdown={breakdown}
            choices={breakdownChoices}
            onBreakdown={(b) => go({ ...view, breakdown: b })}
            tagKey={view.tag_key}
            onTagKey={(tagKey) => go({ ...view, breakdown: 'tag', tag_key: tagKey })}
            rows={sums.data as BreakdownRow[]}
            total={sums.totals.tokens.total}
            keys={keyMap}
            projects={projects.data ?? []}
            allProjects={allProjects}
            onNarrow={narrow}
            stale={summary.loading}
          />
          <section aria-labelledby="usage-chart-heading" aria-busy={chart.loading}>
            <h2 id="usage-chart-heading" class="visually-hidden">
              Tokens over time
            </h2>
            <ErrorBanner error={chart.error} action="Loading the chart failed" />
            {series === undefined && chart.loading && (
              <p class="loading-note" role="status">
                Loading the chart…
              </p>
            )}
            {series !== undefined && chart.error == null && (
              <div class={chart.loading ? 'is-stale' : undefined}>
                <UsageChart series={series} />
              </div>
            )}
          </section>
        </>
      )}

      <section aria-labelledby="usage-records-heading" aria-busy={page.loading}>
        <div class="section-heading">
          <h2 id="usage-records-heading">Records</h2>
          <div class="records-heading-actions">
            <button type="button" onClick={() => void exportCsv()} aria-disabled={exporting} aria-describedby="usage-export-hint">
              {exporting ? 'Exporting…' : 'Export CSV'}
            </button>
            <div class="field field-inline">
              <label for="usage-page-size">Per page</label>
              <select id="usage-page-size" value={String(pageSize)} onChange={(e) => setPageSize(Number(e.currentTarget.value))}>
                {PAGE_SIZES.map((n) => (
                  <option value={String(n)} key={n}>
                    {n}
                  </option>
                ))}
              </select>
            </div>
          </div>
        </div>
        <p id="usage-export-hint" class="hint">
          The export holds every record of these filters and range, not only this page.
        </p>
        <ErrorBanner error={exportError} action="Exporting failed" />
        <ErrorBanner error={page.error} action="Loading usage records failed" />
        {records === undefined && page.loading && (
          <p class="loading-note" role="status">
            Loading records…
          </p>
        )}
        {records !== undefined && !page.loading && page.error == null && records.length === 0 && (
          <p class="empty">{filtered ? 'No usage records match these filters.' : 'No usage records in this range.'}</p>
        )}
        {records !== undefined && records.length > 0 && page.error == null && (
          <div class={`table-scroll${page.loading ? ' is-stale' : ''}`} role="region" aria-labelledby="usage-records-heading" tabIndex={0}>
            <UsageRecordsTable records={records} keys={keyMap} projects={projects.data ?? []} allProjects={allProjects} />
          </div>
        )}
        <Pager state={pager} nextCursor={page.data?.next_cursor ?? null} shown={records?.length ?? 0} pageSize={pageSize} onChange={setPager} label="Usage record pages" loading={page.loading} />
      </section>
    </>
  );
}
