import type { Ref } from 'preact';
import { useState } from 'preact/hooks';
import { DELIVERY_STATUSES, type DeliveryStatus, type Page, type Webhook, type WebhookDelivery } from '../api/types.js';
import { useApi } from '../auth/session-context.js';
import { ErrorBanner } from '../components/error-banner.js';
import { currentCursor, firstPage, Pager } from '../components/pager.js';
import { DeliveryStatusBadge } from '../components/webhook-badges.js';
import { formatDateTime } from '../lib/format.js';
import { useAsync } from '../lib/use-async.js';
import '../components/record-views.css';

/**
 * One webhook's delivery log, newest first, paged with the API's cursors like the other record
 * tables. Failed deliveries are marked as the audit page marks failures: a row edge, an icon and
 * the word, and a count on the page. On a phone each delivery is a card of labelled values, as
 * the audit page's events are (record-views.css). The parent keys this by webhook, so the filter
 * and the page start afresh for each.
 */
const PAGE_SIZE = 50;

export function DeliveryLog({ webhook, headingRef }: { webhook: Webhook; headingRef: Ref<HTMLHeadingElement> }) {
  const api = useApi();
  const [status, setStatus] = useState<'' | DeliveryStatus>('');
  const [pager, setPager] = useState(firstPage);
  const [tick, setTick] = useState(0);

  const deliveries = useAsync(
    () =>
      api.get<Page<WebhookDelivery>>(`/v1/projects/${webhook.project_id}/webhooks/${webhook.id}/deliveries`, {
        status,
        limit: PAGE_SIZE,
        cursor: currentCursor(pager),
      }),
    [webhook.id, status, pager, tick],
  );
  const rows = deliveries.data?.data ?? [];
  const failures = rows.filter((d) => d.status === 'failed').length;

  return (
    <section aria-labelledby="delivery-log-heading" aria-busy={deliveries.loading}>
      <div class="section-heading">
        <h2 id="delivery-log-heading" tabIndex={-1} ref={headingRef} class="wrap-anywhere">
          Deliveries to <code>{webhook.url}</code>
        </h2>
        {failures > 0 && (
          <p class="failure-count">
            <span aria-hidden="true">✕ </span>
            {failures} failed on this page
          </p>
        )}
      </div>
      <div class="form-row log-controls">
        <div class="field field-inline">
          <label for="delivery-status">Status</label>
          <select
            id="delivery-status"
            value={status}
            onChange={(e) => {
              setStatus(e.currentTarget.value as '' | DeliveryStatus);
              setPager(firstPage());
            }}
          >
            <option value="">Any</option>
            {DELIVERY_STATUSES.map((s) => (
              <option value={s} key={s}>
                {s}
              </option>
            ))}
          </select>
        </div>
        <button
          type="button"
          onClick={() => {
            setPager(firstPage());
            setTick((t) => t + 1);
          }}
        >
          Refresh<span class="visually-hidden"> deliveries</span>
        </button>
      </div>
      <ErrorBanner error={deliveries.error} action="Loading deliveries failed" />
      {deliveries.data !== undefined && rows.length === 0 && (
        <p class="empty">{status === '' ? 'Nothing was sent to this webhook yet.' : `No ${status} deliveries.`}</p>
      )}
      {rows.length > 0 && (
        <div class="table-scroll" role="region" aria-labelledby="delivery-log-heading" tabIndex={0}>
          <table class="records card-table deliveries">
            <thead>
              <tr>
                <th scope="col">Event time</th>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col" class="num">
                  Attempts
                </th>
                <th scope="col" class="num">
                  Last HTTP status
                </th>
                <th scope="col">Last error</th>
                <th scope="col">Last attempt</th>
                <th scope="col">Next attempt</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((d) => (
                <tr key={d.id} class={d.status === 'failed' ? 'row-failed' : undefined}>
                  <td data-label="Event time">
                    <DateTime value={d.created_at} />
                  </td>
                  <td data-label="Event" class="card-wide">
                    <span class="delivery-event">
                      <code>{d.event_type}</code>
                      <code class="small muted" title="The webhook-id header: the same on every attempt">
                        {d.event_id}
                      </code>
                    </span>
                  </td>
                  <td data-label="Status">
                    <DeliveryStatusBadge status={d.status} />
                  </td>
                  <td class="num" data-label="Attempts">
                    {d.attempts}
                  </td>
                  <td class="num" data-label="Last HTTP status">
                    {d.last_status ?? '—'}
                  </td>
                  <td class="cell-error card-wide" data-label="Last error">
                    {d.last_error ?? '—'}
                  </td>
                  <td data-label="Last attempt" class="card-wide">
                    <DateTime value={d.last_attempt_at} />
                  </td>
                  <td data-label="Next attempt" class="card-wide">
                    <DateTime value={d.next_attempt_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager
        state={pager}
        nextCursor={deliveries.data?.next_cursor ?? null}
        shown={rows.length}
        pageSize={PAGE_SIZE}
        onChange={setPager}
        label="Delivery pages"
      />
    </section>
  );
}

/**
 * Date and time may go onto two lines when the table is tight, but neither breaks inside. One
 * element, so a phone's card puts it opposite its label as a whole.
 */
function DateTime({ value }: { value: string | null }) {
  const [date, time] = formatDateTime(value).split(' ');
  return time === undefined ? (
    <span>{date}</span>
  ) : (
    <span>
      <span class="nowrap">{date}</span> <span class="nowrap">{time}</span>
    </span>
  );
}
