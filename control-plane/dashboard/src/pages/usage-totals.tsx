import type { UsageSummary } from '../api/types.js';
import { ErrorBanner } from '../components/error-banner.js';
import { formatCost, formatDateTime, formatNumber } from '../lib/format.js';
import type { TimeRange } from '../lib/record-query.js';
import { describeTimeZone } from '../lib/time-zone.js';
import type { Breakdown } from '../lib/usage-view.js';

/**
 * The range's totals, and what the page says instead of them: "Loading totals…" before the first
 * answer, the old figures dimmed while new ones load, the error alone (no stale figures) when
 * loading failed, and for an empty range why it is empty and the way out.
 */
export function UsageTotals({
  range,
  sums,
  loading,
  error,
  filtered,
  onRetry,
  onClearFilters,
  onWiden,
}: {
  range: TimeRange;
  sums: UsageSummary<Breakdown> | undefined;
  loading: boolean;
  error: unknown;
  filtered: boolean;
  onRetry: () => void;
  onClearFilters: () => void;
  /** Shows a wider range; null when the range is already wide. */
  onWiden: (() => void) | null;
}) {
  return (
    <section aria-labelledby="usage-totals-heading" aria-busy={loading}>
      <h2 id="usage-totals-heading">Totals for the selected range</h2>
      <p class="view-line">
        <span>
          {formatDateTime(range.from)} to {formatDateTime(range.to)}
        </span>
        <span>Times in {describeTimeZone(range.to)}</span>
      </p>
      {error !== null && error !== undefined && (
        <>
          <ErrorBanner error={error} action="Loading the totals failed" />
          <p>
            <button type="button" onClick={onRetry}>
              Try again
            </button>
          </p>
        </>
      )}
      {(error === null || error === undefined) && sums === undefined && (
        <p class="loading-note" role="status">
          Loading totals…
        </p>
      )}
      {sums !== undefined && (
        <div class={loading ? 'is-stale' : undefined}>
          {loading && (
            <p class="loading-note" role="status">
              Updating…
            </p>
          )}
          <dl class="stats">
            <div>
              <dt>Requests</dt>
              <dd>{formatNumber(sums.totals.requests)}</dd>
            </div>
            <div>
              <dt>Input tokens</dt>
              <dd>{formatNumber(sums.totals.tokens.input)}</dd>
            </div>
            <div>
              <dt>Cached input</dt>
              <dd>{formatNumber(sums.totals.tokens.cached)}</dd>
            </div>
            <div>
              <dt>Output tokens</dt>
              <dd>{formatNumber(sums.totals.tokens.output)}</dd>
            </div>
            <div>
              <dt>Total tokens</dt>
              <dd>{formatNumber(sums.totals.tokens.total)}</dd>
            </div>
            <div>
              <dt>Cost</dt>
              <dd title={sums.totals.cost_usd === null ? 'No price is known for these models' : undefined}>{formatCost(sums.totals.cost_usd)}</dd>
            </div>
          </dl>
          {!loading && sums.totals.requests === 0 && (
            <div class="empty empty-actions" role="status">
              {filtered ? (
                <>
                  <p>No usage matches these filters in this range.</p>
                  <button type="button" onClick={onClearFilters}>
                    Clear filters
                  </button>
                </>
              ) : (
                <>
                  <p>No usage in this range.</p>
                  {onWiden !== null && (
                    <button type="button" onClick={onWiden}>
                      Show the last 30 days
                    </button>
                  )}
                </>
              )}
            </div>
          )}
        </div>
      )}
    </section>
  );
}
