import type { ApiKey, Project, UsageRecord } from '../api/types.js';
import { formatCost, formatDateTime, formatLatency, formatNumber, shortId } from '../lib/format.js';

/** One page of usage records; on a phone each record is a card (record-views.css). */
export function UsageRecordsTable({
  records,
  keys,
  projects,
  allProjects,
}: {
  records: readonly UsageRecord[];
  keys: Map<string, ApiKey>;
  projects: readonly Project[];
  allProjects: boolean;
}) {
  const keyName = (id: string) => keys.get(id)?.name ?? shortId(id);
  const projectName = (id: string) => projects.find((p) => p.id === id)?.name ?? shortId(id);
  return (
    <table class="records card-table usage-records compact-table">
      <thead>
        <tr>
          <th scope="col">Time</th>
          {allProjects && <th scope="col">Project</th>}
          <th scope="col">Key</th>
          <th scope="col">Model</th>
          <th scope="col">Provider</th>
          <th scope="col" class="num">
            Input
          </th>
          <th scope="col" class="num">
            Cached
          </th>
          <th scope="col" class="num">
            Output
          </th>
          <th scope="col" class="num">
            Total
          </th>
          <th scope="col" class="num">
            Cost
          </th>
          <th scope="col" class="num">
            Latency
          </th>
          <th scope="col">Finish</th>
        </tr>
      </thead>
      <tbody>
        {records.map((r) => (
          <tr key={r.id} title={`Request ${r.request_id}`}>
            <td class="nowrap" data-label="Time">
              {formatDateTime(r.timestamp)}
            </td>
            {allProjects && (
              <td data-label="Project" title={r.project_id}>
                {projectName(r.project_id)}
              </td>
            )}
            <td data-label="Key" title={r.key_id}>
              {keyName(r.key_id)}
            </td>
            <td class="cell-name card-wide" data-label="Model">
              {r.model}
            </td>
            <td data-label="Provider">{r.provider}</td>
            <td class="num" data-label="Input">
              {formatNumber(r.tokens.input)}
            </td>
            <td class="num" data-label="Cached">
              {formatNumber(r.tokens.cached)}
            </td>
            <td class="num" data-label="Output">
              {formatNumber(r.tokens.output)}
            </td>
            <td class="num" data-label="Total">
              {formatNumber(r.tokens.total)}
            </td>
            <td class="num" data-label="Cost">
              {formatCost(r.cost_usd)}
            </td>
            <td class="num" data-label="Latency">
              {formatLatency(r.latency_ms)}
            </td>
            <td data-label="Finish">
              {/* Whether it streamed goes under the finish reason: a column of its own would push the table past a laptop's width. */}
              {r.finish_reason === 'error' || r.finish_reason === 'cancelled' ? (
                <span class="badge badge-error">
                  <span aria-hidden="true">✕</span> {r.finish_reason}
                </span>
              ) : r.provider_finish_reason !== null ? (
                <span title={`The provider said “${r.provider_finish_reason}”`}>
                  {r.finish_reason} ({r.provider_finish_reason})
                </span>
              ) : (
                r.finish_reason
              )}
              {r.stream && <span class="sub-line">streamed</span>}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
