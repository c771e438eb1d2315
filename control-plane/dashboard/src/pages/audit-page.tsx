import { useEffect, useMemo, useState } from 'preact/hooks';
import { AUDIT_OUTCOMES, AUDIT_TYPES, type AuditEvent, type AuditOutcome, type List, type Member, type Page } from '../api/types.js';
import { useApi, useUser } from '../auth/session-context.js';
import { ErrorBanner } from '../components/error-banner.js';
import { FiltersToggle } from '../components/filters-toggle.js';
import { isFailure, OutcomeBadge } from '../components/outcome-badge.js';
import { PageHeading } from '../components/page-heading.js';
import { currentCursor, firstPage, Pager, type PagerState } from '../components/pager.js';
import { ProjectPicker, useProjects, useSelectedProject } from '../components/projects-context.js';
import { RangeFields } from '../components/range-fields.js';
import '../components/record-views.css';
import { SideSheet } from '../components/side-sheet.js';
import { auditFilterCount, auditViewFromQuery, auditViewToParams, AUDIT_DEFAULT_RANGE, type AuditView } from '../lib/audit-view.js';
import { formatDateTime, formatLatency, shortId } from '../lib/format.js';
import { loadKeyDirectory } from '../lib/key-directory.js';
import { presetChoice, resolveRange, type TimeRange } from '../lib/record-query.js';
import { navigate, useLocation } from '../lib/router.js';
import { describeTimeZone } from '../lib/time-zone.js';
import { withParams } from '../lib/url-filters.js';
import { useAsync } from '../lib/use-async.js';
import { AuditDetails } from './audit-details.js';

/**
 * The audit trail, newest first: every gateway request (refused ones included) and every
 * management action, in a time range, by outcome and type, with the filters in the address.
 * Failed rows carry an icon, a word and a marked row edge as well as colour. The list keeps to the
 * width of the screen (a card per event on a phone); everything else about an event is in its
 * details panel.
 */
const PAGE_SIZE = 50;

/** Event types grouped by what they concern ("key" for key.created, key.deleted), alphabetically. */
function groupTypes(types: readonly string[]): [string, string[]][] {
  const groups = new Map<string, string[]>();
  for (const type of [...types].sort()) {
    const group = type.split('.')[0] ?? type;
    groups.set(group, [...(groups.get(group) ?? []), type]);
  }
  return [...groups.entries()];
}

export function AuditPage() {
  const api = useApi();
  const me = useUser();
  const projects = useProjects();
  const selected = useSelectedProject({ required: false });
  const projectId = selected.projectId;
  const allProjects = projectId === null;
  const { path, query } = useLocation();
  const queryText = query.toString();

  const view = useMemo(() => auditViewFromQuery(query, Date.now()), [queryText]);
  const [tick, setTick] = useState(0);
  const range: TimeRange = useMemo(() => {
    const resolved = resolveRange(view.range, Date.now());
    return 'problem' in resolved ? (resolveRange(presetChoice(AUDIT_DEFAULT_RANGE, Date.now()), Date.now()) as TimeRange) : resolved;
  }, [queryText, tick]);
  const [draft, setDraft] = useState<AuditView>(view);
  const [problem, setProblem] = useState<string | null>(null);
  const [filtersOpen, setFiltersOpen] = useState(false);
  const [shown, setShown] = useState<AuditEvent | null>(null);
  // The form follows the address (Back, Forward, a link), but a project switch keeps unapplied edits.
  const viewKey = JSON.stringify(auditViewToParams(view));
  useEffect(() => {
    setDraft(view);
    setProblem(null);
  }, [viewKey]);

  const go = (next: AuditView) => navigate(withParams(path, query, auditViewToParams(next)));

  // Actors are user ids; the project's members give most of them a readable email.
  const members = useAsync(
    () => (projectId === null ? Promise.resolve([] as Member[]) : api.get<List<Member>>(`/v1/projects/${projectId}/members`).then((l) => l.data)),
    [projectId],
  );
  // Likewise key ids: the keys lists have names; a deleted key keeps its short id.
  const keys = useAsync(() => loadKeyDirectory(api, projectId), [projectId, tick]);
  const keyName = (id: string | null) => (id === null ? '—' : (keys.data?.get(id)?.name ?? shortId(id)));
  const actorName = (id: string | null) => {
    if (id === null) return '—';
    if (id === me.id) return `${me.email} (you)`;
    return members.data?.find((m) => m.user_id === id)?.email ?? shortId(id);
  };
  const projectName = (id: string | null) => (id === null ? '—' : (projects.data?.find((p) => p.id === id)?.name ?? shortId(id)));

  const filterQuery = { project_id: projectId, outcome: view.outcome, type: view.type, from: range.from, to: range.to };
  const filterKey = JSON.stringify(filterQuery);
  const [pagerOf, setPagerOf] = useState<{ key: string; state: PagerState }>({ key: filterKey, state: firstPage() });
  // Compared by cursor, not identity: the fallback first page is a fresh object on every render.
  const pager = pagerOf.key === filterKey ? pagerOf.state : firstPage();
  const setPager = (state: PagerState) => setPagerOf({ key: filterKey, state });

  const events = useAsync(
    () => api.get<Page<AuditEvent>>('/v1/audit', { ...filterQuery, order_desc: 'timestamp', limit: PAGE_SIZE, cursor: currentCursor(pager) }),
    [filterKey, pager.stack.length, currentCursor(pager), tick],
  );

  const apply = (event: Event) => {
    event.preventDefault();
    const resolved = resolveRange(draft.range, Date.now());
    if ('problem' in resolved) return setProblem(resolved.problem);
    setProblem(null);
    go(draft);
    setTick((t) => t + 1);
  };
  const filtered = auditFilterCount(view) > 0;
  const list = events.error == null ? events.data?.data : undefined;
  const failures = list?.filter((e) => isFailure(e.outcome)).length ?? 0;
  const types: string[] = view.type === '' || (AUDIT_TYPES as readonly string[]).includes(view.type) ? [...AUDIT_TYPES] : [view.type, ...AUDIT_TYPES];

  return (
    <>
      <PageHeading title="Audit">
        <ProjectPicker selected={selected} allowAll />
      </PageHeading>

      <FiltersToggle open={filtersOpen} onToggle={() => setFiltersOpen(!filtersOpen)} controls="audit-filters" active={auditFilterCount(draft)} />
      <form id="audit-filters" class={`panel filters filters-collapsible${filtersOpen ? ' is-open' : ''}`} onSubmit={apply} aria-labelledby="audit-filters-heading">
        <h2 id="audit-filters-heading" class="visually-hidden">
          Filters
        </h2>
        <RangeFields idPrefix="audit" value={draft.range} onChange={(r) => setDraft({ ...draft, range: r })} />
        <div class="filter-grid filter-grid-spaced">
          <div class="field">
            <label for="audit-outcome">Outcome</label>
            <select id="audit-outcome" value={draft.outcome} onChange={(e) => setDraft({ ...draft, outcome: e.currentTarget.value as AuditOutcome | '' })}>
              <option value="">Any outcome</option>
              {AUDIT_OUTCOMES.map((o) => (
                <option value={o} key={o}>
                  {o.replace('_', ' ')}
                </option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for="audit-type">Type</label>
            <select id="audit-type" value={draft.type} onChange={(e) => setDraft({ ...draft, type: e.currentTarget.value })}>
              <option value="">Any type</option>
              {groupTypes(types).map(([group, members]) => (
                <optgroup label={group} key={group}>
                  {members.map((t) => (
                    <option value={t} key={t}>
                      {t}
                    </option>
                  ))}
                </optgroup>
              ))}
            </select>
          </div>
        </div>
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
          <button type="button" onClick={() => go({ outcome: '', type: '', range: presetChoice(AUDIT_DEFAULT_RANGE, Date.now()) })}>
            Reset filters
          </button>
          <button
            type="button"
            onClick={() => {
              setPager(firstPage());
              setTick((t) => t + 1);
            }}
          >
            Refresh
          </button>
        </div>
      </form>

      <section aria-labelledby="audit-events-heading" aria-busy={events.loading}>
        <div class="section-heading">
          <h2 id="audit-events-heading">Events, newest first</h2>
          {failures > 0 && (
            <p class="failure-count">
              <span aria-hidden="true">✕ </span>
              {failures} failed on this page
            </p>
          )}
        </div>
        <p class="view-line">
          <span>
            {formatDateTime(range.from)} to {formatDateTime(range.to)}
          </span>
          <span>Times in {describeTimeZone(range.to)}</span>
        </p>
        <ErrorBanner error={events.error} action="Loading audit events failed" />
        {list === undefined && events.loading && (
          <p class="loading-note" role="status">
            Loading events…
          </p>
        )}
        {list !== undefined && !events.loading && list.length === 0 && (
          <div class="empty empty-actions" role="status">
            {filtered ? (
              <>
                <p>No audit events match these filters in this range.</p>
                <button type="button" onClick={() => go({ ...view, outcome: '', type: '' })}>
                  Clear filters
                </button>
              </>
            ) : (
              <p>No audit events in this range.</p>
            )}
          </div>
        )}
        {list !== undefined && list.length > 0 && (
          <div class={`table-scroll${events.loading ? ' is-stale' : ''}`} role="region" aria-labelledby="audit-events-heading" tabIndex={0}>
            <table class="records fit-table card-table">
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Outcome</th>
                  <th scope="col">Type</th>
                  {allProjects && <th scope="col">Project</th>}
                  <th scope="col">Actor or key</th>
                  <th scope="col">Model</th>
                  <th scope="col" class="num">
                    Status
                  </th>
                  <th scope="col" class="num">
                    Latency
                  </th>
                  <th scope="col">
                    <span class="visually-hidden">Details</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.map((e) => (
                  <tr
                    key={e.id}
                    class={[isFailure(e.outcome) ? 'row-failed' : '', shown?.id === e.id ? 'row-selected' : ''].join(' ').trim() || undefined}
                    onClick={(click) => {
                      // The row is a large target for the mouse; the Details button is the keyboard's.
                      if ((click.target as HTMLElement).closest('button') === null) setShown(e);
                    }}
                  >
                    <td class="nowrap" data-label="Time">
                      {formatDateTime(e.timestamp)}
                    </td>
                    <td data-label="Outcome">
                      <span>
                        <OutcomeBadge outcome={e.outcome} />
                        {e.error_code !== null && <code class="sub-line">{e.error_code}</code>}
                      </span>
                    </td>
                    <td class="card-wide" data-label="Type">
                      <code>{e.type}</code>
                    </td>
                    {allProjects && (
                      <td data-label="Project" title={e.project_id ?? undefined}>
                        {projectName(e.project_id)}
                      </td>
                    )}
                    {/* A management action names who did it; gateway traffic, the key it came with. */}
                    <td class="card-wide" data-label={e.actor !== null ? 'Actor' : 'Key'} title={(e.actor ?? e.key_id) ?? undefined}>
                      {e.actor !== null ? actorName(e.actor) : keyName(e.key_id)}
                    </td>
                    <td data-label="Model">{e.model ?? '—'}</td>
                    <td class="num" data-label="Status">
                      {e.status}
                    </td>
                    <td class="num" data-label="Latency">
                      {formatLatency(e.latency_ms)}
                    </td>
                    <td data-label="">
                      <button type="button" class="link-button" onClick={() => setShown(e)} aria-haspopup="dialog">
                        Details<span class="visually-hidden"> of the event at {formatDateTime(e.timestamp)}</span>
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <Pager state={pager} nextCursor={events.data?.next_cursor ?? null} shown={list?.length ?? 0} pageSize={PAGE_SIZE} onChange={setPager} label="Audit event pages" loading={events.loading} />
      </section>

      <SideSheet open={shown !== null} title={shown === null ? '' : `${shown.type} · ${formatDateTime(shown.timestamp)}`} onClose={() => setShown(null)}>
        {shown !== null && <AuditDetails event={shown} projectName={projectName} keyName={keyName} actorName={actorName} />}
      </SideSheet>
    </>
  );
}
