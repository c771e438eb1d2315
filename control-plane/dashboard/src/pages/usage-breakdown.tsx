import type { ApiKey, Project, SummaryFigures } from '../api/types.js';
import { useState } from 'preact/hooks';
import { formatCost, formatNumber, formatShare, shortId } from '../lib/format.js';
import { BREAKDOWN_LABELS, type Breakdown } from '../lib/usage-view.js';

/**
 * The range's sums per model, provider, key or project (GET /v1/usage/summary?group_by=…), each
 * with its share of the tokens and its cost. Keys and projects show by name; a group's name
 * narrows the page to it.
 */
export type BreakdownRow = SummaryFigures & Partial<Record<Breakdown, string | null>>;

const TAG_KEY = /^[a-z0-9_.-]{1,32}$/;

export function UsageBreakdown({
  breakdown,
  choices,
  onBreakdown,
  tagKey,
  onTagKey,
  rows,
  total,
  keys,
  projects,
  allProjects,
  onNarrow,
  stale,
}: {
  breakdown: Breakdown;
  choices: readonly Breakdown[];
  onBreakdown: (b: Breakdown) => void;
  /** The tag key the Tag breakdown sums over. */
  tagKey: string;
  onTagKey: (key: string) => void;
  rows: readonly BreakdownRow[];
  total: number;
  keys: Map<string, ApiKey>;
  projects: readonly Project[];
  allProjects: boolean;
  onNarrow: (breakdown: Breakdown, value: string) => void;
  stale: boolean;
}) {
  const [tagDraft, setTagDraft] = useState(tagKey);
  const tagKeyValid = TAG_KEY.test(tagDraft);
  const projectName = (id: string) => projects.find((p) => p.id === id)?.name;
  const label = (value: string) => {
    if (breakdown === 'key') {
      const key = keys.get(value);
      return { text: key?.name ?? shortId(value), title: key === undefined ? `${value} (a deleted key, or one of a project not listed)` : value, sub: allProjects && key ? projectName(key.project_id) : undefined };
    }
    if (breakdown === 'project') return { text: projectName(value) ?? shortId(value), title: value, sub: undefined };
    return { text: value, title: undefined, sub: undefined };
  };
  return (
    <section aria-labelledby="usage-breakdown-heading" class={stale ? 'is-stale' : undefined}>
      <div class="section-heading">
        <h2 id="usage-breakdown-heading">Breakdown</h2>
        <ul class="breakdown-tabs" aria-label="Break down by">
          {choices.map((b) => (
            <li key={b}>
              <button type="button" aria-pressed={b === breakdown} onClick={() => onBreakdown(b)}>
                {BREAKDOWN_LABELS[b]}
              </button>
            </li>
          ))}
        </ul>
        {breakdown === 'tag' && (
          <form
            class="field field-inline"
            onSubmit={(e) => {
              e.preventDefault();
              if (tagKeyValid) onTagKey(tagDraft);
            }}
          >
            <label for="usage-tag-key">Tag key</label>
            <input id="usage-tag-key" value={tagDraft} maxLength={32} aria-invalid={!tagKeyValid} onInput={(e) => setTagDraft(e.currentTarget.value.trim())} />
            <button type="submit" aria-disabled={!tagKeyValid}>
              Show
            </button>
          </form>
        )}
      </div>
      <div class="table-scroll" role="region" aria-label={`By ${BREAKDOWN_LABELS[breakdown].toLowerCase()}`} tabIndex={0}>
        <table class="records card-table">
          <thead>
            <tr>
              <th scope="col">{BREAKDOWN_LABELS[breakdown]}</th>
              <th scope="col" class="num">
                Requests
              </th>
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
                Total tokens
              </th>
              <th scope="col" class="num">
                Share
              </th>
              <th scope="col" class="num">
                Cost
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => {
              const raw = row[breakdown];
              const value = raw ?? '';
              const name = label(value);
              return (
                <tr key={raw === null ? '\u0000none' : value}>
                  <th scope="row" data-label={BREAKDOWN_LABELS[breakdown]}>
                    <span>
                      {raw === null ? (
                        // The records without an end user, or without this tag: nothing to narrow to.
                        <span class="sub-line">{breakdown === 'tag' ? `No ${tagKey} tag` : 'No end user'}</span>
                      ) : (
                        <button type="button" class="link-button" title={name.title} onClick={() => onNarrow(breakdown, value)}>
                          {name.text}
                        </button>
                      )}
                      {name.sub !== undefined && <span class="sub-line">{name.sub}</span>}
                    </span>
                  </th>
                  <td class="num" data-label="Requests">
                    {formatNumber(row.requests)}
                  </td>
                  <td class="num" data-label="Input">
                    {formatNumber(row.tokens.input)}
                  </td>
                  <td class="num" data-label="Cached">
                    {formatNumber(row.tokens.cached)}
                  </td>
                  <td class="num" data-label="Output">
                    {formatNumber(row.tokens.output)}
                  </td>
                  <td class="num" data-label="Total tokens">
                    {formatNumber(row.tokens.total)}
                  </td>
                  <td class="num" data-label="Share">
                    <span class="share">
                      <span class="share-track" aria-hidden="true">
                        <span class="share-fill" style={{ width: `${total > 0 ? Math.max(1, Math.round((row.tokens.total / total) * 100)) : 0}%` }} />
                      </span>
                      <span class="share-value">{formatShare(row.tokens.total, total)}</span>
                    </span>
                  </td>
                  <td class="num" data-label="Cost" title={row.cost_usd === null ? 'No price is known for these records' : undefined}>
                    {formatCost(row.cost_usd)}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </section>
  );
}
