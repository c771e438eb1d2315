import { useState } from 'preact/hooks';
import type { ApiKey, List, NewApiKey } from '../api/types.js';
import { useApi } from '../auth/session-context.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { ErrorBanner } from '../components/error-banner.js';
import { PageHeading } from '../components/page-heading.js';
import { ProjectPicker, useSelectedProject } from '../components/projects-context.js';
import { useToasts } from '../components/toasts.js';
import { formatDateTime, formatRelative } from '../lib/format.js';
import { href, Link } from '../lib/router.js';
import { useAsync } from '../lib/use-async.js';
import { NewKeyDialog } from './new-key-dialog.js';

export function KeysPage() {
  const api = useApi();
  const notify = useToasts();
  const selected = useSelectedProject({ required: true });
  const projectId = selected.projectId;
  const keys = useAsync(
    () => (projectId === null ? Promise.resolve([]) : api.get<List<ApiKey>>(`/v1/projects/${projectId}/keys`).then((list) => list.data)),
    [projectId],
  );
  const [created, setCreated] = useState<NewApiKey | null>(null);
  const [deleting, setDeleting] = useState<ApiKey | null>(null);
  const now = Date.now();

  return (
    <>
      <PageHeading title="API keys">
        <ProjectPicker selected={selected} allowAll={false} />
      </PageHeading>
      {projectId === null && selected.project === null && (
        <p class="empty">
          There is no project to hold keys yet. <Link href="/projects">Create a project</Link> first.
        </p>
      )}

      {projectId !== null && (
        <>
          <div class="split">
            <CreateKeyForm
              projectId={projectId}
              onCreated={(key) => {
                setCreated(key);
                keys.reload();
              }}
            />
            <aside class="panel guidance" aria-labelledby="rotation-heading">
              <h2 id="rotation-heading">Rotating a key</h2>
              <ol>
                <li>Create a new key.</li>
                <li>Deploy it to every client that uses the old one.</li>
                <li>
                  Verify that traffic flows: the new key's “Last used” time appears below, and its requests appear under{' '}
                  <Link href={href('/usage', { project: projectId })}>Usage</Link>.
                </li>
                <li>Delete the old key. Deletion takes effect at once, also for requests in flight, which get 401.</li>
              </ol>
            </aside>
          </div>

          <section aria-labelledby="key-list-heading" aria-busy={keys.loading}>
            <div class="section-heading">
              <h2 id="key-list-heading">Keys of “{selected.project?.name ?? '…'}”</h2>
              <button type="button" onClick={keys.reload}>
                Refresh
              </button>
            </div>
            <ErrorBanner error={keys.error} action="Loading keys failed" />
            {keys.data?.length === 0 && <p class="empty">This project has no keys.</p>}
            {keys.data !== undefined && keys.data.length > 0 && (
              <div class="table-scroll" role="region" aria-labelledby="key-list-heading" tabIndex={0}>
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Prefix</th>
                      <th scope="col">Created</th>
                      <th scope="col">Last used</th>
                      <th scope="col">Expires</th>
                      <th scope="col">
                        <span class="visually-hidden">Actions</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {keys.data.map((key) => (
                      <tr key={key.id}>
                        <th scope="row">{key.name}</th>
                        <td>
                          <code>{key.prefix}…</code>
                        </td>
                        <td>{formatDateTime(key.created_at)}</td>
                        <td title={key.last_used_at === null ? undefined : formatDateTime(key.last_used_at)}>{formatRelative(key.last_used_at, now)}</td>
                        <td>{key.expires_at === null ? 'never' : formatDateTime(key.expires_at)}</td>
                        <td class="cell-actions">
                          <button type="button" class="button-danger-quiet" onClick={() => setDeleting(key)}>
                            Delete<span class="visually-hidden"> key {key.name}</span>
                          </button>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </section>
        </>
      )}

      <NewKeyDialog created={created} onClose={() => setCreated(null)} />

      <ConfirmDialog
        open={deleting !== null}
        title={`Delete key “${deleting?.name ?? ''}”?`}
        confirmLabel="Delete key"
        onClose={() => setDeleting(null)}
        onConfirm={async () => {
          if (deleting === null) return;
          await api.delete(`/v1/projects/${deleting.project_id}/keys/${deleting.id}`);
          notify(`Key “${deleting.name}” deleted.`);
          keys.reload();
        }}
      >
        <p>
          Every request that uses <code>{deleting?.prefix}…</code> is refused with 401 from now on, on every gateway replica, including requests in
          flight. This cannot be undone.
        </p>
      </ConfirmDialog>
    </>
  );
}

function CreateKeyForm({ projectId, onCreated }: { projectId: string; onCreated: (key: NewApiKey) => void }) {
  const api = useApi();
  const [name, setName] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    setError(null);
    try {
      const key = await api.post<NewApiKey>(`/v1/projects/${projectId}/keys`, { name: name.trim() });
      setName('');
      onCreated(key);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="panel" aria-labelledby="new-key-heading">
      <h2 id="new-key-heading">Create a key</h2>
      <ErrorBanner error={error} action="Creating the key failed" />
      <form class="form-row" onSubmit={submit}>
        <div class="field">
          <label for="new-key-name">Key name</label>
          <input
            id="new-key-name"
            required
            maxLength={200}
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
            aria-describedby="new-key-name-hint"
          />
          <p id="new-key-name-hint" class="hint">
            Where it will be used, e.g. “billing-service prod”. The secret is shown once, right after creation.
          </p>
        </div>
        <div class="field field-submit">
          <button type="submit" class="button-primary" aria-disabled={busy} aria-busy={busy}>
            {busy ? 'Creating…' : 'Create key'}
          </button>
        </div>
      </form>
    </section>
  );
}
