import { useEffect, useRef, useState } from 'preact/hooks';
import type { List, NewWebhook, Webhook } from '../api/types.js';
import { useApi } from '../auth/session-context.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { ErrorBanner } from '../components/error-banner.js';
import { PageHeading } from '../components/page-heading.js';
import { ProjectPicker, useSelectedProject } from '../components/projects-context.js';
import { useToasts } from '../components/toasts.js';
import { WebhookStateBadge } from '../components/webhook-badges.js';
import { formatDateTime } from '../lib/format.js';
import { href, Link, navigate, useLocation } from '../lib/router.js';
import { useAsync } from '../lib/use-async.js';
import { useProjectPermissions } from '../lib/use-project-role.js';
import { DeliveryLog } from './delivery-log.js';
import { NewWebhookDialog } from './new-webhook-dialog.js';
import { NewWebhookForm } from './new-webhook-form.js';
import './webhooks-page.css';

/**
 * A project's webhooks and the delivery log of one of them (`?webhook=`, else the first). Every
 * member reads them; only project admins and owners add, switch and delete them, so the controls
 * are left out for the other roles, as the member list says (useProjectPermissions). While that
 * list is unknown or unreadable, the controls are shown and the API's refusal is shown where it
 * happens. On a phone each webhook is a card (webhooks-page.css).
 */
export function WebhooksPage() {
  const api = useApi();
  const notify = useToasts();
  const { query } = useLocation();
  const selected = useSelectedProject({ required: true });
  const projectId = selected.projectId;
  const role = useProjectPermissions(projectId);
  const manage = role.can('webhook.manage');

  const webhooks = useAsync(
    () => (projectId === null ? Promise.resolve([] as Webhook[]) : api.get<List<Webhook>>(`/v1/projects/${projectId}/webhooks`).then((l) => l.data)),
    [projectId],
  );
  // The list of the project shown before stays in hand while the new one loads.
  const list = webhooks.data?.filter((w) => w.project_id === projectId);
  const wanted = query.get('webhook');
  const shown = list?.find((w) => w.id === wanted) ?? list?.[0] ?? null;

  const [created, setCreated] = useState<NewWebhook | null>(null);
  const [deleting, setDeleting] = useState<Webhook | null>(null);
  const [switching, setSwitching] = useState<string | null>(null);
  const [actionError, setActionError] = useState<unknown>(null);

  // Choosing a log moves focus to it, so keyboard and screen-reader users land on what they asked for.
  const logHeading = useRef<HTMLHeadingElement>(null);
  const focusLog = useRef(false);
  useEffect(() => {
    if (!focusLog.current) return;
    focusLog.current = false;
    logHeading.current?.focus();
  }, [shown?.id]);

  const showLog = (webhook: Webhook) => {
    if (webhook.id === shown?.id) {
      logHeading.current?.focus();
      return;
    }
    focusLog.current = true;
    navigate(href('/webhooks', { project: webhook.project_id, webhook: webhook.id }));
  };

  const setEnabled = async (webhook: Webhook, enabled: boolean) => {
    if (switching !== null) return;
    setSwitching(webhook.id);
    setActionError(null);
    try {
      await api.patch<Webhook>(`/v1/projects/${webhook.project_id}/webhooks/${webhook.id}`, { enabled });
      notify(enabled ? `Webhook to ${webhook.url} enabled.` : `Webhook to ${webhook.url} disabled; its pending deliveries ended.`);
      webhooks.reload();
    } catch (err) {
      setActionError(err);
    } finally {
      setSwitching(null);
    }
  };

  return (
    <>
      <PageHeading title="Webhooks">
        <ProjectPicker selected={selected} allowAll={false} />
      </PageHeading>
      {projectId === null && selected.project === null && (
        <p class="empty">
          There is no project to send events from yet. <Link href="/projects">Create a project</Link> first.
        </p>
      )}

      {projectId !== null && (
        <>
          <div class={manage ? 'split' : undefined}>
            {manage && (
              <NewWebhookForm
                projectId={projectId}
                onCreated={(webhook) => {
                  setCreated(webhook);
                  webhooks.reload();
                }}
              />
            )}
            <aside class="panel guidance" aria-labelledby="webhook-guidance-heading">
              <h2 id="webhook-guidance-heading">How deliveries work</h2>
              <ul>
                <li>
                  Each event is a <code>POST</code> of JSON, signed with the webhook's secret (Standard Webhooks: <code>webhook-id</code>,{' '}
                  <code>webhook-timestamp</code>, <code>webhook-signature</code>).
                </li>
                <li>Any 2xx answer within 10 s delivers it. Anything else is retried, 10 attempts over about 21 hours; redirects are not followed.</li>
                <li>
                  After 5 deliveries in a row fail, or a <code>410 Gone</code>, the gateway disables the webhook. Enabling it again sends only new events.
                </li>
              </ul>
              {!manage && role.role !== undefined && (
                <p class="small role-note">
                  {role.role !== null && `You are a ${role.role} of this project. `}Project admins and owners add, disable and delete webhooks.
                </p>
              )}
            </aside>
          </div>

          <section aria-labelledby="webhook-list-heading" aria-busy={webhooks.loading}>
            <div class="section-heading">
              <h2 id="webhook-list-heading">Webhooks of “{selected.project?.name ?? '…'}”</h2>
              <button type="button" onClick={webhooks.reload}>
                Refresh
              </button>
            </div>
            <ErrorBanner error={webhooks.error} action="Loading webhooks failed" />
            <ErrorBanner error={actionError} action="Changing the webhook failed" />
            {list?.length === 0 && <p class="empty">This project has no webhooks.</p>}
            {list !== undefined && list.length > 0 && (
              <div class="table-scroll" role="region" aria-labelledby="webhook-list-heading" tabIndex={0}>
                <table class="webhooks table-stack">
                  <thead>
                    <tr>
                      <th scope="col">Endpoint URL</th>
                      <th scope="col">Events</th>
                      <th scope="col">State</th>
                      <th scope="col">Created</th>
                      <th scope="col">
                        <span class="visually-hidden">Actions</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {list.map((webhook) => (
                      <tr key={webhook.id} class={webhook.enabled ? undefined : 'row-off'}>
                        <th scope="row" class="cell-url wrap-anywhere">
                          <code>{webhook.url}</code>
                        </th>
                        <td data-label="Events">
                          <ul class="event-list">
                            {webhook.events.map((type) => (
                              <li key={type}>
                                <code>{type}</code>
                              </li>
                            ))}
                          </ul>
                        </td>
                        <td data-label="State">
                          <WebhookStateBadge enabled={webhook.enabled} />
                          {!webhook.enabled && (
                            <p class="small state-reason">{webhook.disabled_reason === null ? 'Disabled by hand.' : `By the gateway: ${webhook.disabled_reason}`}</p>
                          )}
                        </td>
                        <td class="nowrap" data-label="Created">
                          {formatDateTime(webhook.created_at)}
                        </td>
                        <td class="cell-actions">
                          <div class="row-actions">
                            <button type="button" aria-pressed={webhook.id === shown?.id} onClick={() => showLog(webhook)}>
                              Deliveries<span class="visually-hidden"> of {webhook.url}</span>
                            </button>
                            {manage && (
                              <button
                                type="button"
                                onClick={() => setEnabled(webhook, !webhook.enabled)}
                                aria-disabled={switching === webhook.id}
                                aria-busy={switching === webhook.id}
                              >
                                {webhook.enabled ? 'Disable' : 'Enable'}
                                <span class="visually-hidden"> webhook {webhook.url}</span>
                              </button>
                            )}
                            {manage && (
                              <button type="button" class="button-danger-quiet" onClick={() => setDeleting(webhook)}>
                                Delete<span class="visually-hidden"> webhook {webhook.url}</span>
                              </button>
                            )}
                          </div>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </section>

          {shown !== null && <DeliveryLog key={shown.id} webhook={shown} headingRef={logHeading} />}
        </>
      )}

      <NewWebhookDialog created={created} onClose={() => setCreated(null)} />

      <ConfirmDialog
        open={deleting !== null}
        title="Delete this webhook?"
        confirmLabel="Delete webhook"
        onClose={() => setDeleting(null)}
        onConfirm={async () => {
          if (deleting === null) return;
          await api.delete(`/v1/projects/${deleting.project_id}/webhooks/${deleting.id}`);
          notify(`Webhook to ${deleting.url} deleted.`);
          webhooks.reload();
        }}
      >
        <p class="wrap-anywhere">
          Events stop going to <code>{deleting?.url}</code> at once, and its delivery log is deleted with it; attempts not yet made are not made. This
          cannot be undone.
        </p>
      </ConfirmDialog>
    </>
  );
}
