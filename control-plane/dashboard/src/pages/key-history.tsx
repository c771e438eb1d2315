import type { ApiKey } from '../api/types.js';
import { formatDateTime } from '../lib/format.js';

/** Deleted keys, folded away: who had which prefix and when it died, for reading old records. */
export function KeyHistory({ keys }: { keys: ApiKey[] }) {
  if (keys.length === 0) return null;
  const newestFirst = [...keys].sort((a, b) => (b.deleted_at ?? '').localeCompare(a.deleted_at ?? ''));
  return (
    <details class="key-history">
      <summary>
        Deleted keys <span class="muted">({keys.length})</span>
      </summary>
      <div class="table-scroll" role="region" aria-label="Deleted keys" tabIndex={0}>
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Prefix</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">Deleted</th>
            </tr>
          </thead>
          <tbody>
            {newestFirst.map((key) => (
              <tr key={key.id} class="row-deleted">
                <th scope="row">{key.name}</th>
                <td>
                  <code>{key.prefix}…</code>
                </td>
                <td class="nowrap">{formatDateTime(key.created_at)}</td>
                <td class="nowrap">{formatDateTime(key.last_used_at)}</td>
                <td class="nowrap">
                  <span aria-hidden="true">✕ </span>
                  {formatDateTime(key.deleted_at)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </details>
  );
}
