import { useEffect, useRef, useState } from 'preact/hooks';
import { AUDIT_OUTCOMES, AUDIT_TYPES, type ApiKey, type AuditEvent, type AuditOutcome, type List, type Member, type Page } from '../api/types.js';
import { useApi, useUser } from '../auth/session-context.js';
import { ErrorBanner } from '../components/error-banner.js';
import { isFailure, OutcomeBadge } from '../components/outcome-badge.js';
import { PageHeading } from '../components/page-heading.js';
import { currentCursor, firstPage, Pager } from '../components/pager.js';
import { ProjectPicker, useSelectedProject } from '../components/projects-context.js';
import { formatDateTime, formatLatency, shortId } from '../lib/format.js';
import { useAsync } from '../lib/use-async.js';

/**
 * The audit trail, newest first: every gateway request (refused ones included) and every
 * management action. Failed rows carry an icon, a word and a marked row edge as well as colour.
 */
interface AuditFilters {
  outcome: '' | AuditOutcome;
  type: string;
}

const PAGE_SIZE = 50;

export function AuditPage() {
  const api = useApi();
  const me = useUser();
  const selected = useSelectedProject({ required: false });
  const projectId = selected.projectId;
  const [draft, setDraft] = useState<AuditFilters>({ outcome: '', type: '' });
  const [applied, setApplied] = useState<AuditFilters>(draft);
  const [pager, setPager] = useState(firstPage);
  const [tick, setTick] = useState(0);

  const shownProject = useRef(projectId);
  useEffect(() => {
    if (shownProject.current === projectId) return;
    shownProject.current = projectId;
    setPager(firstPage());
  }, [projectId]);

  // Actors are user ids; the project's members give most of them a readable email.
  const members = useAsync(
    () => (projectId === null ? Promise.resolve([] as Member[]) : api.get<List<Member>>(`/v1/projects/${projectId}/members`).then((l) => l.data)),
    [projectId],
  );
  // Likewise key ids: the project's live keys have names; a deleted key keeps its short id.
  const keys = useAsync(
    () => (projectId === null ? Promise.resolve([] as ApiKey[]) : api.get<List<ApiKey>>(`/v1/projects/${projectId}/keys`).then((l) => l.data)),
    [projectId, tick],
  );
  const keyName = (id: string | null) => (id === null ? '—' : (keys.data?.find((k) => k.id === id)?.name ?? shortId(id)));
  const actorName = (id: string | null) => {
    if (id === null) return '—';
    if (id === me.id) return `${me.email} (you)`;
    return members.data?.find((m) => m.user_id === id)?.email ?? shortId(id);
  };

  const events = useAsync(
    () =>
      api.get<Page<AuditEvent>>('/v1/audit', {
        project_id: projectId,
        outcome: applied.outcome,
        type: applied.type,
        order_desc: 'timestamp',
        limit: PAGE_SIZE,
        cursor: currentCursor(pager),
      }),
    [projectId, applied, pager, tick],
  );

  const apply = (event: Event) => {
    event.preventDefault();
    setApplied({ outcome: draft.outcome, type: draft.type.trim() });
    setPager(firstPage());
  };

  const failures = events.data?.data.filter((e) => isFailure(e.outcome)).length ?? 0;

  return (
    <>
      <PageHeading title="Audit">
        <ProjectPicker selected={selected} allowAll />
      </PageHeading>

      <form class="panel filters" onSubmit={apply} aria-labelledby="audit-filters-heading">
        <h2 id="audit-filters-heading" class="visually-hidden">
          Filters
        </h2>
        <div class="filter-grid">
          <div class="field">
            <label for="audit-outcome">Outcome</label>
            <select id="audit-outcome" value={draft.outcome} onChange={(e) => setDraft({ ...draft, outcome: e.currentTarget.value as AuditFilters['outcome'] })}>
              <option value="">Any</option>
              {AUDIT_OUTCOMES.map((o) => (
                <option value={o} key={o}>
                  {o}
                </option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for="audit-type">Type</label>
            <input id="audit-type" list="audit-types" maxLength={100} value={draft.type} onInput={(e) => setDraft({ ...draft, type: e.currentTarget.value })} aria-describedby="audit-type-hint" />
            <datalist id="audit-types">
              {AUDIT_TYPES.map((t) => (
                <option value={t} key={t} />
              ))}
            </datalist>
            <p id="audit-type-hint" class="hint">
              e.g. gateway.request, key.deleted
            </p>
          </div>
        </div>
        <div class="form-actions">
          <button type="submit" class="button-primary">
            Apply filters
          </button>
          <button
            type="button"
            onClick={() => {
              setDraft({ outcome: '', type: '' });
              setApplied({ outcome: '', type: '' });
              setPager(firstPage());
            }}
          >
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
        <ErrorBanner error={events.error} action="Loading audit events failed" />
        {events.data?.data.length === 0 && <p class="empty">No audit events match.</p>}
        {events.data !== undefined && events.data.data.length > 0 && (
          <div class="table-scroll" role="region" aria-labelledby="audit-events-heading" tabIndex={0}>
            <table class="records">
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Outcome</th>
                  <th scope="col">Type</th>
                  <th scope="col" class="num">
                    Status
                  </th>
                  <th scope="col">Error code</th>
                  <th scope="col">Model</th>
                  <th scope="col">Key</th>
                  <th scope="col">Actor</th>
                  <th scope="col">Client</th>
                  <th scope="col" class="num">
                    Latency
                  </th>
                  <th scope="col">Request id</th>
                </tr>
              </thead>
              <tbody>
                {events.data.data.map((e) => (
                  <tr key={e.id} class={isFailure(e.outcome) ? 'row-failed' : undefined}>
                    <td class="nowrap">{formatDateTime(e.timestamp)}</td>
                    <td>
                      <OutcomeBadge outcome={e.outcome} />
                    </td>
                    <td>
                      <code>{e.type}</code>
                    </td>
                    <td class="num">{e.status}</td>
                    <td>{e.error_code === null ? '—' : <code>{e.error_code}</code>}</td>
                    <td>{e.model ?? '—'}</td>
                    <td title={e.key_id ?? undefined}>{keyName(e.key_id)}</td>
                    <td title={e.actor ?? undefined}>{actorName(e.actor)}</td>
                    <td title={e.user_agent ?? undefined}>{e.client_ip ?? '—'}</td>
                    <td class="num">{formatLatency(e.latency_ms)}</td>
                    <td>
                      <code class="small">{e.request_id}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <Pager
          state={pager}
          nextCursor={events.data?.next_cursor ?? null}
          shown={events.data?.data.length ?? 0}
          pageSize={PAGE_SIZE}
          onChange={setPager}
          label="Audit event pages"
        />
      </section>
    </>
  );
}
