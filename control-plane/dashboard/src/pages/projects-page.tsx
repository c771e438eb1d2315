import { useState } from 'preact/hooks';
import type { Project } from '../api/types.js';
import { useApi } from '../auth/session-context.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { Dialog } from '../components/dialog.js';
import { ErrorBanner } from '../components/error-banner.js';
import { PageHeading } from '../components/page-heading.js';
import { useProjects } from '../components/projects-context.js';
import { QuotaBar } from '../components/quota-bar.js';
import { useToasts } from '../components/toasts.js';
import { formatDateTime, formatNumber, parseQuota } from '../lib/format.js';
import { href, Link } from '../lib/router.js';

export function ProjectsPage() {
  const api = useApi();
  const notify = useToasts();
  const projects = useProjects();
  const [editing, setEditing] = useState<Project | null>(null);
  const [deleting, setDeleting] = useState<Project | null>(null);

  return (
    <>
      <PageHeading title="Projects" />
      <p class="lead">Each project has its own API keys, token quota, usage records and audit trail.</p>

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
        <ul class="cards">
          {projects.data?.map((project) => (
            <li key={project.id}>
              <article class="card" aria-labelledby={`project-${project.id}`}>
                <h3 id={`project-${project.id}`}>{project.name}</h3>
                <QuotaBar project={project} />
                <p class="muted small">Created {formatDateTime(project.created_at)}</p>
                <p class="card-links">
                  <Link href={href('/keys', { project: project.id })}>
                    Keys<span class="visually-hidden"> of {project.name}</span>
                  </Link>
                  <Link href={href('/usage', { project: project.id })}>
                    Usage<span class="visually-hidden"> of {project.name}</span>
                  </Link>
                  <Link href={href('/audit', { project: project.id })}>
                    Audit<span class="visually-hidden"> of {project.name}</span>
                  </Link>
                  <Link href={href('/members', { project: project.id })}>
                    Members<span class="visually-hidden"> of {project.name}</span>
                  </Link>
                  <Link href={href('/webhooks', { project: project.id })}>
                    Webhooks<span class="visually-hidden"> of {project.name}</span>
                  </Link>
                </p>
                <div class="card-actions">
                  <button type="button" onClick={() => setEditing(project)}>
                    Edit quota<span class="visually-hidden"> of {project.name}</span>
                  </button>
                  <button type="button" class="button-danger-quiet" onClick={() => setDeleting(project)}>
                    Delete<span class="visually-hidden"> project {project.name}</span>
                  </button>
                </div>
              </article>
            </li>
          ))}
        </ul>
      </section>

      <EditQuotaDialog
        project={editing}
        onClose={() => setEditing(null)}
        onSaved={(project) => {
          notify(`Quota of “${project.name}” saved.`);
          projects.reload();
        }}
      />

      <ConfirmDialog
        open={deleting !== null}
        title={`Delete project “${deleting?.name ?? ''}”?`}
        confirmLabel="Delete project"
        onClose={() => setDeleting(null)}
        onConfirm={async () => {
          if (deleting === null) return;
          await api.delete(`/v1/projects/${deleting.id}`);
          notify(`Project “${deleting.name}” deleted.`);
          projects.reload();
        }}
      >
        <p>
          All of its API keys are deleted with it: every request that uses one of them is refused at once, including requests in flight. Its usage
          records and audit events are kept.
        </p>
        <p>Only project owners can delete a project.</p>
      </ConfirmDialog>
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
            Leave empty for no quota.
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

function EditQuotaDialog({ project, onClose, onSaved }: { project: Project | null; onClose: () => void; onSaved: (project: Project) => void }) {
  const api = useApi();
  const [quota, setQuota] = useState('');
  const [shownFor, setShownFor] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  // Start from the project's current quota each time the dialog opens for one.
  if (project !== null && shownFor !== project.id) {
    setShownFor(project.id);
    setQuota(project.quota_tokens === null ? '' : String(project.quota_tokens));
    setProblem(null);
    setError(null);
  }

  const close = () => {
    setShownFor(null);
    onClose();
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    if (project === null) return;
    const parsed = parseQuota(quota);
    if (!parsed.ok) return setProblem(parsed.problem);
    setProblem(null);
    setBusy(true);
    try {
      const saved = await api.patch<Project>(`/v1/projects/${project.id}`, { quota_tokens: parsed.value });
      onSaved(saved);
      close();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog open={project !== null} title={`Quota of “${project?.name ?? ''}”`} onClose={close}>
      <form onSubmit={submit}>
        <p class="muted">Used so far: {formatNumber(project?.used_tokens ?? 0)} tokens.</p>
        <ErrorBanner error={error} action="Saving the quota failed" />
        <div class="field">
          <label for="edit-quota">Token quota</label>
          <input
            id="edit-quota"
            inputMode="numeric"
            autofocus
            value={quota}
            onInput={(e) => setQuota(e.currentTarget.value)}
            aria-describedby={problem ? 'edit-quota-hint edit-quota-problem' : 'edit-quota-hint'}
            aria-invalid={problem !== null}
          />
          <p id="edit-quota-hint" class="hint">
            Leave empty for no quota. Requests are refused with 429 once the project has used it up.
          </p>
          {problem && (
            <p id="edit-quota-problem" class="field-problem" role="alert">
              <span aria-hidden="true">⚠ </span>
              {problem}
            </p>
          )}
        </div>
        <div class="dialog-actions">
          <button type="button" onClick={close}>
            Cancel
          </button>
          <button type="submit" class="button-primary" aria-disabled={busy} aria-busy={busy}>
            {busy ? 'Saving…' : 'Save quota'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
