import { useState } from 'preact/hooks';
import type { ApiKey, List, NewApiKey, SummaryFigures } from '../api/types.js';
import { useApi, useUser } from '../auth/session-context.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { ErrorBanner } from '../components/error-banner.js';
import { PageHeading } from '../components/page-heading.js';
import { ProjectPicker, useSelectedProject } from '../components/projects-context.js';
import { QuotaWarning } from '../components/quota-state.js';
import { useToasts } from '../components/toasts.js';
import { formatDateTime, formatNumber, formatRelative } from '../lib/format.js';
import { keyState } from '../lib/key-expiry.js';
import { loadKeyUsage } from '../lib/key-usage.js';
import { href, Link } from '../lib/router.js';
import { useAsync } from '../lib/use-async.js';
import { roleAtLeast, useProjectRole } from '../lib/use-project-role.js';
import { CreateKeyForm } from './create-key-form.js';
import { KeyHistory } from './key-history.js';
import { NewKeyDialog } from './new-key-dialog.js';
import './keys-page.css';

/**
 * A project's keys: expiry (expired and soon-expiring keys marked in words), last use, and each
 * key's requests and tokens over the last 24 hours and 30 days; the deleted ones folded away
 * below. Viewers see no create or delete controls; members create keys and delete their own;
 * admins and owners delete any (as the project's member list says; if it cannot be read, the
 * controls show and the API decides).
 */
export function KeysPage() {
  const api = useApi();
  const me = useUser();
  const notify = useToasts();
  const selected = useSelectedProject({ required: true });
  const projectId = selected.projectId;
  const role = useProjectRole(projectId);
  const unknownRole = role.role === undefined;
  const canCreate = role.role === undefined ? role.error !== null : roleAtLeast(role.role, 'member');
  const canDeleteAny = role.role === undefined ? role.error !== null : roleAtLeast(role.role, 'admin');

  const keys = useAsync(
    () =>
      projectId === null
        ? Promise.resolve([] as ApiKey[])
        : api.get<List<ApiKey>>(`/v1/projects/${projectId}/keys`, { include_deleted: true }).then((list) => list.data),
    [projectId],
  );
  const usage = useAsync(() => (projectId === null ? Promise.resolve(null) : loadKeyUsage(api, projectId, Date.now())), [projectId, keys.data]);
  const [created, setCreated] = useState<NewApiKey | null>(null);
  const [deleting, setDeleting] = useState<ApiKey | null>(null);
  const now = Date.now();

  const mine = keys.data?.filter((k) => k.project_id === projectId);
  const live = mine?.filter((k) => !k.deleted_at);
  const deleted = mine?.filter((k) => k.deleted_at) ?? [];
  const expiredCount = live?.filter((k) => keyState(k, now) === 'expired').length ?? 0;
  const reload = () => keys.reload();

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
          {selected.project !== null && <QuotaWarning project={selected.project} />}
          <div class={canCreate ? 'split' : undefined}>
            {canCreate && (
              <CreateKeyForm
                projectId={projectId}
                onCreated={(key) => {
                  setCreated(key);
                  reload();
                }}
              />
            )}
            <aside class="panel guidance" aria-labelledby="rotation-heading">
              <h2 id="rotation-heading">Rotating a key</h2>
              <ol>
                <li>Create a new key.</li>
                <li>Deploy it to every client that uses the old one.</li>
                <li>
                  Verify that traffic flows: the new key's “Last used” time and its requests appear below, and under{' '}
                  <Link href={href('/usage', { project: projectId })}>Usage</Link>.
                </li>
                <li>Delete the old key. Deletion takes effect at once, also for requests in flight, which get 401.</li>
              </ol>
              {!unknownRole && !canCreate && (
                <p class="small role-note">{role.role !== null ? `You are a ${role.role} of this project: you can read its keys. ` : ''}Members create keys; admins and owners delete any key.</p>
              )}
            </aside>
          </div>

          <section aria-labelledby="key-list-heading" aria-busy={keys.loading}>
            <div class="section-heading">
              <h2 id="key-list-heading">Keys of “{selected.project?.name ?? '…'}”</h2>
              <button type="button" onClick={reload}>
                Refresh
              </button>
            </div>
            <ErrorBanner error={keys.error} action="Loading keys failed" />
            <ErrorBanner error={usage.error} action="Loading the keys' usage failed" />
            {expiredCount > 0 && (
              <p class="keys-expired-note" role="status">
                <span aria-hidden="true">✕ </span>
                {expiredCount === 1 ? '1 key has expired' : `${expiredCount} keys have expired`}: the gateway refuses it with 401. Delete {expiredCount === 1 ? 'it' : 'them'} once no client uses{' '}
                {expiredCount === 1 ? 'it' : 'them'}.
              </p>
            )}
            {live?.length === 0 && <p class="empty">This project has no keys.</p>}
            {live !== undefined && live.length > 0 && (
              <div class="table-scroll" role="region" aria-labelledby="key-list-heading" tabIndex={0}>
                <table class="keys-table">
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Prefix</th>
                      <th scope="col">Created</th>
                      <th scope="col">Expires</th>
                      <th scope="col">Last used</th>
                      <th scope="col" class="num">
                        Last 24 h
                      </th>
                      <th scope="col" class="num">
                        Last 30 days
                      </th>
                      <th scope="col">
                        <span class="visually-hidden">Actions</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {live.map((key) => {
                      const state = keyState(key, now);
                      const mayDelete = canDeleteAny || (canCreate && key.created_by === me.id);
                      return (
                        <tr key={key.id} class={state === 'expired' ? 'row-expired' : state === 'expiring' ? 'row-expiring' : undefined}>
                          <th scope="row">{key.name}</th>
                          <td data-label="Prefix">
                            <code>{key.prefix}…</code>
                          </td>
                          <td class="nowrap" data-label="Created">
                            {formatDateTime(key.created_at)}
                          </td>
                          <td class="nowrap" data-label="Expires">
                            <ExpiryCell expiresAt={key.expires_at} state={state} now={now} />
                          </td>
                          <td class="nowrap" data-label="Last used" title={key.last_used_at === null ? undefined : formatDateTime(key.last_used_at)}>
                            {formatRelative(key.last_used_at, now)}
                          </td>
                          <td class="num" data-label="Last 24 h">
                            <UsageFigures figures={usage.data?.day.get(key.id)} loading={usage.data === undefined} />
                          </td>
                          <td class="num" data-label="Last 30 days">
                            <UsageFigures figures={usage.data?.month.get(key.id)} loading={usage.data === undefined} />
                          </td>
                          <td class="cell-actions">
                            {mayDelete && (
                              <button type="button" class="button-danger-quiet" onClick={() => setDeleting(key)}>
                                Delete<span class="visually-hidden"> key {key.name}</span>
                              </button>
                            )}
                          </td>
                        </tr>
                      );
                    })}
                  </tbody>
                </table>
              </div>
            )}
            <KeyHistory keys={deleted} />
          </section>
        </>
      )}

      <NewKeyDialog created={created} project={selected.project} onClose={() => setCreated(null)} />

      <ConfirmDialog
        open={deleting !== null}
        title={`Delete key “${deleting?.name ?? ''}”?`}
        confirmLabel="Delete key"
        onClose={() => setDeleting(null)}
        onConfirm={async () => {
          if (deleting === null) return;
          await api.delete(`/v1/projects/${deleting.project_id}/keys/${deleting.id}`);
          notify(`Key “${deleting.name}” deleted.`);
          reload();
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

function ExpiryCell({ expiresAt, state, now }: { expiresAt: string | null; state: ReturnType<typeof keyState>; now: number }) {
  if (expiresAt === null) return <span class="muted">never</span>;
  if (state === 'expired') {
    return (
      <span class="badge badge-key-expired" title={formatDateTime(expiresAt)}>
        <span aria-hidden="true">✕</span> Expired {formatRelative(expiresAt, now)}
      </span>
    );
  }
  const days = Math.max(1, Math.ceil((new Date(expiresAt).getTime() - now) / 86_400_000));
  if (state === 'expiring') {
    return (
      <span class="badge badge-key-expiring" title={formatDateTime(expiresAt)}>
        <span aria-hidden="true">⚠</span> Expires in {days === 1 ? '1 day' : `${days} days`}
      </span>
    );
  }
  return <span title={`in ${days} days`}>{formatDateTime(expiresAt)}</span>;
}

function UsageFigures({ figures, loading }: { figures: SummaryFigures | undefined; loading: boolean }) {
  if (loading) return <span class="muted">…</span>;
  if (figures === undefined || figures.requests === 0) return <span class="muted">no requests</span>;
  return (
    <span class="key-usage">
      <span>{formatNumber(figures.tokens.total)} tokens</span>
      <span class="muted small">
        {formatNumber(figures.requests)} {figures.requests === 1 ? 'request' : 'requests'}
      </span>
    </span>
  );
}
