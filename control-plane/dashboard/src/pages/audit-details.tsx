import { Fragment, type ComponentChildren } from 'preact';
import type { AuditEvent } from '../api/types.js';
import { OutcomeBadge } from '../components/outcome-badge.js';
import { formatDateTime, formatLatency } from '../lib/format.js';

/** Every field of one audit event, names resolved where the page knows them, ids beside them. */
export function AuditDetails({
  event,
  projectName,
  keyName,
  actorName,
}: {
  event: AuditEvent;
  projectName: (id: string | null) => string;
  keyName: (id: string | null) => string;
  actorName: (id: string | null) => string;
}) {
  const withId = (name: string, id: string | null) =>
    id === null ? (
      '—'
    ) : (
      <>
        {name}
        {name !== id && <span class="sub-line mono">{id}</span>}
      </>
    );
  const rows: [string, ComponentChildren][] = [
    ['Time', formatDateTime(event.timestamp)],
    ['Outcome', <OutcomeBadge outcome={event.outcome} />],
    ['Type', <code>{event.type}</code>],
    ['HTTP status', String(event.status)],
    ['Error code', event.error_code === null ? '—' : <code>{event.error_code}</code>],
    ['Project', withId(projectName(event.project_id), event.project_id)],
    ['Key', withId(keyName(event.key_id), event.key_id)],
    ['Actor', withId(actorName(event.actor), event.actor)],
    ['Endpoint', event.endpoint ?? '—'],
    ['Model', event.model ?? '—'],
    ['Provider', event.provider ?? '—'],
    ['Providers tried', event.providers.length === 0 ? '—' : event.providers.join(' → ')],
    ['Attempts', String(event.attempts)],
    ['Latency', formatLatency(event.latency_ms)],
    ['Client address', event.client_ip ?? '—'],
    ['User agent', event.user_agent ?? '—'],
    ['Request id', <code>{event.request_id}</code>],
    ['Event id', <code>{event.id}</code>],
  ];
  return (
    <dl class="detail-list">
      {rows.map(([label, value]) => (
        <Fragment key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </Fragment>
      ))}
    </dl>
  );
}
