import { useEffect, useState } from 'preact/hooks';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import type { Batch, BatchPage } from '../api/types.js';
import { useApi } from '../auth/session-context.js';
import { ErrorBanner } from '../components/error-banner.js';
import { PageHeading } from '../components/page-heading.js';
import { currentCursor, firstPage, Pager, type PagerState } from '../components/pager.js';
import { ProjectPicker, useSelectedProject } from '../components/projects-context.js';
import { useToasts } from '../components/toasts.js';
import { BATCH_API_LABEL, BATCH_STATUS_LOOK, batchFileName, batchMoment, batchProgress, isRunning } from '../lib/batch-view.js';
import { formatDateTime, shortId } from '../lib/format.js';
import { Link } from '../lib/router.js';
import { saveBlob } from '../lib/save-file.js';
import { useAsync } from '../lib/use-async.js';
import { mayDo } from '../lib/project-permissions.js';
import { useProjectRole } from '../lib/use-project-role.js';
import './batches-page.css';

/**
 * A project's batches (Batch API and Message Batches), newest first: each with its status, how
 * many of its lines are answered (a bar and the figures in words), its times and the key that
 * made it, and buttons that download its output and error lines. Every member reads them;
 * members and above may cancel a running one (clients make batches with the project's keys).
 * While a batch on the page runs, the page reads the list again every few seconds.
 */
const PAGE_SIZE = 20;
const REFRESH_MS = 5_000;

export function BatchesPage() {
  const api = useApi();
  const notify = useToasts();
  const selected = useSelectedProject({ required: true });
  const projectId = selected.projectId;

  // A page of another project means nothing here: the pager starts again with the project.
  const [pagerOf, setPagerOf] = useState<{ project: string | null; state: PagerState }>({ project: projectId, state: firstPage() });
  const pager = pagerOf.project === projectId ? pagerOf.state : firstPage();
  const setPager = (state: PagerState) => setPagerOf({ project: projectId, state });
  const cursor = currentCursor(pager);

  const batches = useAsync(
    () =>
      projectId === null
        ? Promise.resolve<BatchPage>({ data: [], next_cursor: null, has_more: false })
        : api.get<BatchPage>(`/v1/projects/${projectId}/batches`, { limit: PAGE_SIZE, after: cursor ?? undefined }),
    [projectId, cursor],
  );
  // The page of the project shown before stays in hand while the new one loads.
  const list = batches.data?.data.filter((b) => b.project_id === projectId);
  const running = list?.some(isRunning) ?? false;

  useEffect(() => {
    if (!running) return;
    const timer = setInterval(batches.reload, REFRESH_MS);
    return () => clearInterval(timer);
  }, [running, batches.reload]);

  const role = useProjectRole(projectId);
  // Shown once the role is known to allow it (or could not be read: the API then decides).
  const canCancel = role.role === undefined ? role.error !== null : mayDo(role.role, 'batch.cancel');
  const [cancelling, setCancelling] = useState<Batch | null>(null);

  const [downloading, setDownloading] = useState<string | null>(null);
  const [downloadError, setDownloadError] = useState<unknown>(null);

  const download = async (batch: Batch, which: 'output' | 'errors') => {
    const what = `${batch.id}/${which}`;
    if (downloading !== null) return;
    setDownloading(what);
    setDownloadError(null);
    try {
      const blob = await api.download(`/v1/projects/${batch.project_id}/batches/${batch.id}/${which}`);
      const name = batchFileName(batch, which);
      saveBlob(blob, name);
      notify(`Saved ${name}.`);
    } catch (err) {
      setDownloadError(err);
    } finally {
      setDownloading(null);
    }
  };

  return (
    <>
      <PageHeading title="Batches">
        <ProjectPicker selected={selected} allowAll={false} />
      </PageHeading>
      {projectId === null && selected.project === null && (
        <p class="empty">
          There is no project yet. <Link href="/projects">Create a project</Link> first; its clients' batches show here.
        </p>
      )}

      {projectId !== null && (
        <section aria-labelledby="batch-list-heading" aria-busy={batches.loading}>
          <div class="section-heading">
            <h2 id="batch-list-heading">Batches of “{selected.project?.name ?? '…'}”</h2>
            <button type="button" onClick={batches.reload}>
              Refresh
            </button>
          </div>
          <p class="small muted batch-intro">
            Made by the project's clients with its keys, through <code>/v1/batches</code> or <code>/v1/messages/batches</code>; each line runs as a request of
            that key, with its usage record and audit event. Output holds the lines answered 2xx, Errors the others, as JSON lines.
          </p>
          <ErrorBanner error={batches.error} action="Loading batches failed" />
          <ErrorBanner error={downloadError} action="Downloading the lines failed" />
          {list?.length === 0 && <p class="empty">{pager.stack.length > 1 ? 'No more batches.' : 'This project has no batches.'}</p>}
          {list !== undefined && list.length > 0 && (
            <div class="table-scroll" role="region" aria-labelledby="batch-list-heading" tabIndex={0}>
              <table class="batches table-stack">
                <thead>
                  <tr>
                    <th scope="col">Batch</th>
                    <th scope="col">Status</th>
                    <th scope="col">Progress</th>
                    <th scope="col">Times</th>
                    <th scope="col">
                      <span class="visually-hidden">Downloads</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((batch) => (
                    <BatchRow key={batch.id} batch={batch} downloading={downloading} onDownload={download} onCancel={canCancel ? setCancelling : null} />
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {(pager.stack.length > 1 || batches.data?.has_more === true) && (
            <Pager
              state={pager}
              nextCursor={batches.data?.next_cursor ?? null}
              shown={list?.length ?? 0}
              pageSize={PAGE_SIZE}
              onChange={setPager}
              label="Pages of batches"
              loading={batches.loading}
            />
          )}
        </section>
      )}

      <ConfirmDialog
        open={cancelling !== null}
        title={`Cancel batch ${cancelling?.id ?? ''}?`}
        confirmLabel="Cancel batch"
        onClose={() => setCancelling(null)}
        onConfirm={async () => {
          if (cancelling === null) return;
          await api.post(`/v1/projects/${cancelling.project_id}/batches/${cancelling.id}/cancel`, {});
          notify(`Batch ${cancelling.id} is being cancelled.`);
          batches.reload();
        }}
      >
        <p>
          No line of it starts again and the lines in flight stop; a batch sent to a provider's own batch API is cancelled there too. The answers made so far
          are kept in its output and error files. This cannot be undone.
        </p>
      </ConfirmDialog>
    </>
  );
}

function BatchRow({
  batch,
  downloading,
  onDownload,
  onCancel,
}: {
  batch: Batch;
  downloading: string | null;
  onDownload: (batch: Batch, which: 'output' | 'errors') => void;
  /** Null: the caller may not cancel batches of this project. */
  onCancel: ((batch: Batch) => void) | null;
}) {
  const look = BATCH_STATUS_LOOK[batch.status] ?? { icon: '?', label: batch.status, tone: 'off' };
  const progress = batchProgress(batch);
  const moment = batchMoment(batch);
  const files = [
    { which: 'output', label: 'Output', lines: batch.request_counts.completed },
    { which: 'errors', label: 'Errors', lines: batch.request_counts.failed },
  ] as const;
  return (
    <tr>
      <th scope="row" class="cell-batch">
        <code class="batch-id">{batch.id}</code>
        <span class="small muted batch-kind">
          {BATCH_API_LABEL[batch.api]} · <code>{batch.endpoint}</code>
        </span>
        <span class="small muted batch-kind">
          Key <code title={batch.key_id}>{shortId(batch.key_id)}</code>
        </span>
      </th>
      <td data-label="Status">
        <span class={`badge badge-batch-${look.tone}`}>
          <span aria-hidden="true">{look.icon}</span> {look.label}
        </span>
        {batch.reason !== null && <p class="small state-reason">{batch.reason.message}</p>}
      </td>
      <td data-label="Progress" class="cell-progress">
        <div class="batch-track" aria-hidden="true">
          <div class="batch-fill-completed" style={{ width: `${(progress.completedShare * 100).toFixed(1)}%` }} />
          <div class="batch-fill-failed" style={{ width: `${(progress.failedShare * 100).toFixed(1)}%` }} />
        </div>
        <p class="batch-progress-label">{progress.label}</p>
      </td>
      <td data-label="Times" class="cell-times">
        <dl class="batch-times">
          <dt>Created</dt>
          <dd>{formatDateTime(batch.created_at)}</dd>
          <dt>{moment.label}</dt>
          <dd>{formatDateTime(moment.at)}</dd>
        </dl>
      </td>
      <td class="cell-actions">
        <div class="row-actions">
          {files.map((file) => (
            <button
              type="button"
              key={file.which}
              disabled={file.lines === 0}
              title={file.lines === 0 ? `No line in ${file.label.toLowerCase()} yet` : undefined}
              aria-busy={downloading === `${batch.id}/${file.which}`}
              onClick={() => onDownload(batch, file.which)}
            >
              <span aria-hidden="true">↓ </span>
              {file.label}
              <span class="visually-hidden"> of batch {batch.id}</span>
            </button>
          ))}
          {onCancel !== null && isRunning(batch) && batch.status !== 'cancelling' && (
            <button type="button" class="button-danger-quiet" onClick={() => onCancel(batch)}>
              Cancel<span class="visually-hidden"> batch {batch.id}</span>
            </button>
          )}
        </div>
      </td>
    </tr>
  );
}
