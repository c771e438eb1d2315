/**
 * Newer/older through a keyset-paged list. The API only hands out the cursor of the next page,
 * so the cursors of pages already seen are kept to walk back.
 */
export interface PagerState {
  /** Cursors that opened each page so far; the last is the current page's (null: the first page). */
  stack: (string | null)[];
}

export const firstPage = (): PagerState => ({ stack: [null] });

export function currentCursor(state: PagerState): string | null {
  return state.stack[state.stack.length - 1] ?? null;
}

export function Pager({
  state,
  nextCursor,
  shown,
  pageSize,
  onChange,
  label,
  loading = false,
}: {
  state: PagerState;
  nextCursor: string | null;
  shown: number;
  pageSize: number;
  onChange: (state: PagerState) => void;
  label: string;
  /** A page is being read: its count is not known yet, and "no records" would be a false answer. */
  loading?: boolean;
}) {
  const page = state.stack.length;
  const start = (page - 1) * pageSize + (shown > 0 ? 1 : 0);
  const end = (page - 1) * pageSize + shown;
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" disabled={page <= 1} onClick={() => onChange({ stack: state.stack.slice(0, -1) })}>
        <span aria-hidden="true">← </span>Previous page
      </button>
      <span class="pager-position">
        Page {page} · {loading ? 'Loading…' : shown === 0 ? 'no records' : `records ${start}–${end}`}
      </span>
      <button type="button" disabled={nextCursor === null} onClick={() => nextCursor !== null && onChange({ stack: [...state.stack, nextCursor] })}>
        Next page<span aria-hidden="true"> →</span>
      </button>
    </nav>
  );
}
