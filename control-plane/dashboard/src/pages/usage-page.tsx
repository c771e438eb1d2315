import { useEffect, useRef, useState } from 'preact/hooks';
import { FINISH_REASONS, type ApiKey, type List, type Page, type UsageRecord, type UsageSummary } from '../api/types.js';
import { useApi } from '../auth/session-context.js';
import { ErrorBanner } from '../components/error-banner.js';
import { PageHeading } from '../components/page-heading.js';
import { currentCursor, firstPage, Pager } from '../components/pager.js';
import { ProjectPicker, useSelectedProject } from '../components/projects-context.js';
import { RangeFields } from '../components/range-fields.js';
import { UsageChart } from '../components/usage-chart.js';
import { collectPages } from '../lib/collect-pages.js';
import { formatCost, formatDateTime, formatLatency, formatNumber, shortId } from '../lib/format.js';
import { presetChoice, resolveRange, type RangeChoice, type TimeRange } from '../lib/record-query.js';
import { useAsync } from '../lib/use-async.js';
import { buildUsageSeries } from '../lib/usage-series.js';

/**
 * Usage of one project or all: the totals of a time range, overall and per model, with their
 * cost (summed by the API over the whole range), a chart of tokens over time, and the records
 * themselves, page by page. The API sums but not per time bucket, so the chart walks the records
 * of the range (in pages of 1000, up to CHART_PAGES); the table reads only the page on screen.
 */
interface UsageFilters {
  model: string;
  provider: string;
  finish_reason: string;
  key_id: string;
  range: RangeChoice;
}

const CHART_PAGES = 20;
const CHART_PAGE_SIZE = 1000;
const PAGE_SIZES = [25, 50, 100, 200];

const initialFilters = (): UsageFilters => ({ model: '', provider: '', finish_reason: '', key_id: '', range: presetChoice('24h', Date.now()) });

export function UsagePage() {
  const api = useApi();
  const selected = useSelectedProject({ required: false });
  const projectId = selected.projectId;

  const [draft, setDraft] = useState<UsageFilters>(initialFilters);
  const [applied, setApplied] = useState<{ filters: UsageFilters; range: TimeRange }>(() => {
    const filters = initialFilters();
    return { filters, range: resolveRange(filters.range, Date.now()) as TimeRange };
  });
  const [problem, setProblem] = useState<string | null>(null);
  const [pager, setPager] = useState(firstPage);
  const [pageSize, setPageSize] = useState(50);
  const [tick, setTick] = useState(0);

  // Another project's keys mean nothing here: drop a key filter and start from the first page.
  const shownProject = useRef(projectId);
  useEffect(() => {
    if (shownProject.current === projectId) return;
    shownProject.current = projectId;
    setDraft((d) => ({ ...d, key_id: '' }));
    setApplied((a) => ({ ...a, filters: { ...a.filters, key_id: '' } }));
    setPager(firstPage());
  }, [projectId]);

  const keys = useAsync(
    () => (projectId === null ? Promise.resolve([] as ApiKey[]) : api.get<List<ApiKey>>(`/v1/projects/${projectId}/keys`).then((l) => l.data)),
    [projectId],
  );
  const keyName = (id: string) => keys.data?.find((k) => k.id === id)?.name ?? shortId(id);

  const { filters, range } = applied;
  const query = {
    project_id: projectId,
    model: filters.model,
    provider: filters.provider,
    finish_reason: filters.finish_reason,
    key_id: filters.key_id,
    from: range.from,
    to: range.to,
  };
  const queryKey = JSON.stringify(query);

  const summary = useAsync(() => api.get<UsageSummary>('/v1/usage/summary', { ...query, group_by: 'model' }), [queryKey, tick]);

  const chart = useAsync(async () => {
    const { items, complete } = await collectPages(
      (cursor) => api.get<Page<UsageRecord>>('/v1/usage', { ...query, order_asc: 'timestamp', limit: CHART_PAGE_SIZE, cursor }),
      CHART_PAGES,
    );
    return { complete, series: buildUsageSeries(items, range.from, range.to) };
  }, [queryKey, tick]);

  const page = useAsync(
    () => api.get<Page<UsageRecord>>('/v1/usage', { ...query, order_desc: 'timestamp', limit: pageSize, cursor: currentCursor(pager) }),
    [queryKey, pager, pageSize, tick],
  );

  const apply = (event: Event) => {
    event.preventDefault();
    const resolved = resolveRange(draft.range, Date.now());
    if ('problem' in resolved) return setProblem(resolved.problem);
    setProblem(null);
    setApplied({ filters: draft, range: resolved });
    setPager(firstPage());
  };

  const reset = () => {
    const filters = initialFilters();
    setDraft(filters);
    setProblem(null);
    setApplied({ filters, range: resolveRange(filters.range, Date.now()) as TimeRange });
    setPager(firstPage());
  };

  /** A preset range slides up to now; a custom one is read again as it is. */
  const refresh = () => {
    const resolved = resolveRange(applied.filters.range, Date.now());
    if (!('problem' in resolved)) setApplied((a) => ({ ...a, range: resolved }));
    setPager(firstPage());
    setTick((t) => t + 1);
  };

  const sums = summary.data;
  const series = chart.data?.series;
  const models = sums?.data.map((m) => m.model) ?? [];
  const providers = [...new Set(page.data?.data.map((r) => r.provider) ?? [])];

  return (
    <>
      <PageHeading title="Usage">
        <ProjectPicker selected={selected} allowAll />
      </PageHeading>

      <form class="panel filters" onSubmit={apply} aria-labelledby="usage-filters-heading">
        <h2 id="usage-filters-heading" class="visually-hidden">
          Filters
        </h2>
        <div class="filter-grid">
          <div class="field">
            <label for="usage-model">Model</label>
            <input id="usage-model" list="usage-models" maxLength={200} value={draft.model} onInput={(e) => setDraft({ ...draft, model: e.currentTarget.value })} />
            <datalist id="usage-models">
              {models.map((m) => (
                <option value={m} key={m} />
              ))}
            </datalist>
          </div>
          <div class="field">
            <label for="usage-provider">Provider</label>
            <input id="usage-provider" list="usage-providers" maxLength={200} value={draft.provider} onInput={(e) => setDraft({ ...draft, provider: e.currentTarget.value })} />
            <datalist id="usage-providers">
              {providers.map((p) => (
                <option value={p} key={p} />
              ))}
            </datalist>
          </div>
          <div class="field">
            <label for="usage-finish">Finish reason</label>
            <select id="usage-finish" value={draft.finish_reason} onChange={(e) => setDraft({ ...draft, finish_reason: e.currentTarget.value })}>
              <option value="">Any</option>
              {FINISH_REASONS.map((r) => (
                <option value={r} key={r}>
                  {r}
                </option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for="usage-key">Key</label>
            <select
              id="usage-key"
              value={draft.key_id}
              onChange={(e) => setDraft({ ...draft, key_id: e.currentTarget.value })}
              disabled={projectId === null}
              aria-describedby={projectId === null ? 'usage-key-hint' : undefined}
            >
              <option value="">Any</option>
              {keys.data?.map((k) => (
                <option value={k.id} key={k.id}>
                  {k.name} ({k.prefix}…)
                </option>
              ))}
            </select>
            {projectId === null && (
              <p id="usage-key-hint" class="hint">
                Choose a project to filter by key.
              </p>
            )}
          </div>
        </div>
        <RangeFields idPrefix="usage" value={draft.range} onChange={(choice) => setDraft({ ...draft, range: choice })} />
        {problem && (
          <p class="field-problem" role="alert">
            <span aria-hidden="true">⚠ </span>
            {problem}
          </p>
        )}
        <div class="form-actions">
          <button type="submit" class="button-primary">
            Apply filters
          </button>
          <button type="button" onClick={reset}>
            Reset filters
          </button>
          <button type="button" onClick={refresh}>
            Refresh
          </button>
        </div>
      </form>

      <section aria-labelledby="usage-totals-heading" aria-busy={summary.loading || chart.loading}>
        <h2 id="usage-totals-heading">Totals for the selected range</h2>
        <p class="muted small">
          {formatDateTime(range.from)} to {formatDateTime(range.to)}
        </p>
        <ErrorBanner error={summary.error} action="Loading the totals failed" />
        {sums !== undefined && (
          <>
            <dl class="stats">
              <div>
                <dt>Requests</dt>
                <dd>{formatNumber(sums.totals.requests)}</dd>
              </div>
              <div>
                <dt>Input tokens</dt>
                <dd>{formatNumber(sums.totals.tokens.input)}</dd>
              </div>
              <div>
                <dt>Cached input</dt>
                <dd>{formatNumber(sums.totals.tokens.cached)}</dd>
              </div>
              <div>
                <dt>Output tokens</dt>
                <dd>{formatNumber(sums.totals.tokens.output)}</dd>
              </div>
              <div>
                <dt>Total tokens</dt>
                <dd>{formatNumber(sums.totals.tokens.total)}</dd>
              </div>
              <div>
                <dt>Cost</dt>
                <dd title={sums.totals.cost_usd === null ? 'No price is known for these models' : undefined}>{formatCost(sums.totals.cost_usd)}</dd>
              </div>
            </dl>
            {sums.totals.requests === 0 ? (
              <p class="empty">No usage in this range.</p>
            ) : (
              <div class="chart-and-table">
                <div class="chart-column">
                  <ErrorBanner error={chart.error} action="Loading the chart failed" />
                  {series !== undefined && <UsageChart series={series} />}
                  {chart.data?.complete === false && (
                    <p class="banner banner-info" role="status">
                      <span aria-hidden="true">ℹ </span>
                      The chart covers the first {formatNumber(CHART_PAGES * CHART_PAGE_SIZE)} records of the range; the totals cover all of it. Narrow the range
                      or the filters to chart every record.
                    </p>
                  )}
                </div>
                <div class="table-scroll" role="region" aria-labelledby="usage-by-model-caption" tabIndex={0}>
                  <table class="records">
                    <caption id="usage-by-model-caption">By model</caption>
                    <thead>
                      <tr>
                        <th scope="col">Model</th>
                        <th scope="col" class="num">
                          Requests
                        </th>
                        <th scope="col" class="num">
                          Input
                        </th>
                        <th scope="col" class="num">
                          Cached
                        </th>
                        <th scope="col" class="num">
                          Output
                        </th>
                        <th scope="col" class="num">
                          Total
                        </th>
                        <th scope="col" class="num">
                          Cost
                        </th>
                      </tr>
                    </thead>
                    <tbody>
                      {sums.data.map((m) => (
                        <tr key={m.model}>
                          <th scope="row">{m.model}</th>
                          <td class="num">{formatNumber(m.requests)}</td>
                          <td class="num">{formatNumber(m.tokens.input)}</td>
                          <td class="num">{formatNumber(m.tokens.cached)}</td>
                          <td class="num">{formatNumber(m.tokens.output)}</td>
                          <td class="num">{formatNumber(m.tokens.total)}</td>
                          <td class="num">{formatCost(m.cost_usd)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              </div>
            )}
          </>
        )}
      </section>

      <section aria-labelledby="usage-records-heading" aria-busy={page.loading}>
        <div class="section-heading">
          <h2 id="usage-records-heading">Records</h2>
          <div class="field field-inline">
            <label for="usage-page-size">Per page</label>
            <select
              id="usage-page-size"
              value={String(pageSize)}
              onChange={(e) => {
                setPageSize(Number(e.currentTarget.value));
                setPager(firstPage());
              }}
            >
              {PAGE_SIZES.map((n) => (
                <option value={String(n)} key={n}>
                  {n}
                </option>
              ))}
            </select>
          </div>
        </div>
        <ErrorBanner error={page.error} action="Loading usage records failed" />
        {page.data?.data.length === 0 && <p class="empty">No usage records match.</p>}
        {page.data !== undefined && page.data.data.length > 0 && (
          <div class="table-scroll" role="region" aria-labelledby="usage-records-heading" tabIndex={0}>
            <table class="records">
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Model</th>
                  <th scope="col">Provider</th>
                  <th scope="col">Key</th>
                  <th scope="col" class="num">
                    Input
                  </th>
                  <th scope="col" class="num">
                    Cached
                  </th>
                  <th scope="col" class="num">
                    Output
                  </th>
                  <th scope="col" class="num">
                    Total
                  </th>
                  <th scope="col" class="num">
                    Cost
                  </th>
                  <th scope="col" class="num">
                    Latency
                  </th>
                  <th scope="col">Finish</th>
                  <th scope="col">Stream</th>
                </tr>
              </thead>
              <tbody>
                {page.data.data.map((r) => (
                  <tr key={r.id} title={`Request ${r.request_id}`}>
                    <td class="nowrap">{formatDateTime(r.timestamp)}</td>
                    <td>{r.model}</td>
                    <td>{r.provider}</td>
                    <td title={r.key_id}>{keyName(r.key_id)}</td>
                    <td class="num">{formatNumber(r.tokens.input)}</td>
                    <td class="num">{formatNumber(r.tokens.cached)}</td>
                    <td class="num">{formatNumber(r.tokens.output)}</td>
                    <td class="num">{formatNumber(r.tokens.total)}</td>
                    <td class="num">{formatCost(r.cost_usd)}</td>
                    <td class="num">{formatLatency(r.latency_ms)}</td>
                    <td>
                      {r.finish_reason === 'error' || r.finish_reason === 'cancelled' ? (
                        <span class="badge badge-error">
                          <span aria-hidden="true">✕</span> {r.finish_reason}
                        </span>
                      ) : r.provider_finish_reason !== null ? (
                        <span title={`The provider said “${r.provider_finish_reason}”`}>
                          {r.finish_reason} ({r.provider_finish_reason})
                        </span>
                      ) : (
                        r.finish_reason
                      )}
                    </td>
                    <td>{r.stream ? 'yes' : 'no'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <Pager state={pager} nextCursor={page.data?.next_cursor ?? null} shown={page.data?.data.length ?? 0} pageSize={pageSize} onChange={setPager} label="Usage record pages" />
      </section>
    </>
  );
}
