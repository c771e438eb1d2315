import { useState } from 'preact/hooks';
import type { Project } from '../api/types.js';
import { useApi } from '../auth/session-context.js';
import { ErrorBanner } from '../components/error-banner.js';
import { PageHeading } from '../components/page-heading.js';
import { useProjects } from '../components/projects-context.js';
import { useToasts } from '../components/toasts.js';
import { parseQuota } from '../lib/format.js';
import { parseSort, PROJECTS_PER_PAGE, quotaAlerts, quotaAlertSummary, viewProjects, type ProjectSort } from '../lib/project-list.js';
import { href, navigate, useLocation } from '../lib/router.js';
import { useServedModels } from '../lib/use-gateway.js';
import { DeleteProjectDialog } from './delete-project-dialog.js';
import { ProjectCard } from './project-card.js';
import { ProjectSettingsDialog } from './project-settings-dialog.js';
import './projects-page.css';

const SORT_LABELS: Record<ProjectSort, string> = { name: 'Name', created: 'Newest first', usage: 'Quota use, fullest first' };

/**
 * The account's projects as cards, searched, sorted and paged in the browser; the search, order
 * and page live in the address (`?q=&sort=&page=`), so a reload or a shared link shows the same.
 * Projects near or out of quota are counted in the page header.
 */
export function ProjectsPage() {
  const notify = useToasts();
  const projects = useProjects();
  const served = useServedModels();
  const { query } = useLocation();
  const [editing, setEditing] = useState<Project | null>(null);
  const [deleting, setDeleting] = useState<Project | null>(null);

  const search = query.get('q') ?? '';
  const sort = parseSort(query.get('sort'));
  const all = projects.data ?? [];
  const view = viewProjects(all, { search, sort, page: Number(query.get('page') ?? '1') });
  const alerts = quotaAlerts(all);
  const summary = quotaAlertSummary(alerts);

  const setQuery = (changes: Record<string, string | null>) => {
    const next = new URLSearchParams(query);
    for (const [name, value] of Object.entries(changes)) {
      if (value === null || value === '') next.delete(name);
      else next.set(name, value);
    }
    navigate(href('/projects', Object.fromEntries(next)), { replace: true });
  };

  return (
    <>
      <PageHeading title="Projects">
        {summary !== null && (
          <p class={`quota-summary ${alerts.exhausted.length > 0 ? 'quota-summary-exhausted' : ''}`} role="status">
            <span aria-hidden="true">{alerts.exhausted.length > 0 ? '✕ ' : '⚠ '}</span>
            {summary}
            {sort !== 'usage' && (
              <>
                {' '}
                <button type="button" class="link-button" onClick={() => setQuery({ sort: 'usage', page: null })}>
                  Show them first
                </button>
              </>
            )}
          </p>
        )}
      </PageHeading>
      <p class="lead">Each project has its own API keys, token quota, rate limits, allowed models, usage records and audit trail.</p>

      <CreateProjectForm
        onCreated={(project) => {
          notify(`Project “${project.name}” created.`);
          projects.reload();
        }}
      />

      <section aria-labelledby="project-list-heading" aria-busy={projects.loading}>
        <div class="section-heading">
          <h2 id="project-list-heading">Your projects</h2>
          <button type="button" onClick={projects.reload}>
            Refresh
          </button>
        </div>
        <ErrorBanner error={projects.error} action="Loading projects failed" />
        {projects.data === undefined && projects.loading && <p>Loading projects…</p>}
        {projects.data?.length === 0 && <p class="empty">No projects yet. Create one above to get API keys.</p>}
        {all.length > 0 && (
          <div class="project-tools" role="search" aria-label="Projects">
            <div class="field">
              <label for="project-search">Search</label>
              <input
                id="project-search"
                type="search"
                placeholder="Name or id"
                value={search}
                onInput={(e) => setQuery({ q: e.currentTarget.value, page: null })}
                aria-describedby="project-count"
              />
            </div>
            <div class="field">
              <label for="project-sort">Sort by</label>
              <select id="project-sort" value={sort} onChange={(e) => setQuery({ sort: e.currentTarget.value === 'name' ? null : e.currentTarget.value, page: null })}>
                {(Object.keys(SORT_LABELS) as ProjectSort[]).map((s) => (
                  <option key={s} value={s}>
                    {SORT_LABELS[s]}
                  </option>
                ))}
              </select>
            </div>
            <p id="project-count" class="project-count muted" aria-live="polite">
              {view.matching === all.length ? `${all.length} ${all.length === 1 ? 'project' : 'projects'}` : `${view.matching} of ${all.length} projects match`}
            </p>
          </div>
        )}
        {all.length > 0 && view.matching === 0 && <p class="empty">No project matches “{search}”.</p>}
        <ul class="cards">
          {view.shown.map((project) => (
            <li key={project.id}>
              <ProjectCard project={project} served={served.data} onSettings={setEditing} onDelete={setDeleting} />
            </li>
          ))}
        </ul>
        {view.pages > 1 && (
          <nav class="pager" aria-label="Project pages">
            <button type="button" disabled={view.page <= 1} onClick={() => setQuery({ page: view.page - 1 === 1 ? null : String(view.page - 1) })}>
              <span aria-hidden="true">← </span>Previous page
            </button>
            <span class="pager-position">
              Page {view.page} of {view.pages} · projects {(view.page - 1) * PROJECTS_PER_PAGE + 1}–{(view.page - 1) * PROJECTS_PER_PAGE + view.shown.length}
            </span>
            <button type="button" disabled={view.page >= view.pages} onClick={() => setQuery({ page: String(view.page + 1) })}>
              Next page<span aria-hidden="true"> →</span>
            </button>
          </nav>
        )}
      </section>

      <ProjectSettingsDialog
        project={editing}
        served={served.data}
        servedError={served.error}
        onClose={() => setEditing(null)}
        onSaved={(project) => {
          notify(`Settings of “${project.name}” saved.`);
          projects.reload();
        }}
      />

      <DeleteProjectDialog
        project={deleting}
        onClose={() => setDeleting(null)}
        onDeleted={(project) => {
          notify(`Project “${project.name}” deleted.`);
          projects.reload();
        }}
      />
    </>
  );
}

function CreateProjectForm({ onCreated }: { onCreated: (project: Project) => void }) {
  const api = useApi();
  const [name, setName] = useState('');
  const [quota, setQuota] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    const parsed = parseQuota(quota);
    if (!parsed.ok) return setProblem(parsed.problem);
    setProblem(null);
    setError(null);
    setBusy(true);
    try {
      const project = await api.post<Project>('/v1/projects', { name: name.trim(), quota_tokens: parsed.value });
      setName('');
      setQuota('');
      onCreated(project);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="new-project-heading" class="panel">
      <h2 id="new-project-heading">Create a project</h2>
      <ErrorBanner error={error} action="Creating the project failed" />
      <form class="form-row" onSubmit={submit}>
        <div class="field">
          <label for="new-project-name">Name</label>
          <input id="new-project-name" required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="new-project-quota">Token quota</label>
          <input
            id="new-project-quota"
            inputMode="numeric"
            value={quota}
            onInput={(e) => setQuota(e.currentTarget.value)}
            aria-describedby={problem ? 'new-project-quota-hint new-project-quota-problem' : 'new-project-quota-hint'}
            aria-invalid={problem !== null}
          />
          <p id="new-project-quota-hint" class="hint">
            Leave empty for no quota. Limits and models are in each project's settings.
          </p>
          {problem && (
            <p id="new-project-quota-problem" class="field-problem" role="alert">
              <span aria-hidden="true">⚠ </span>
              {problem}
            </p>
          )}
        </div>
        <div class="field field-submit">
          <button type="submit" class="button-primary" aria-disabled={busy} aria-busy={busy}>
            {busy ? 'Creating…' : 'Create project'}
          </button>
        </div>
      </form>
    </section>
  );
}
