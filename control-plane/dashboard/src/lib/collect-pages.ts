import type { Page } from '../api/types.js';

/**
 * Walks a keyset-paged list to its end, for the totals and the chart of a range. The walk stops
 * after `maxPages` so a wide range cannot keep the browser busy for minutes; `complete` says
 * whether everything was read.
 */
export async function collectPages<T>(fetchPage: (cursor: string | null) => Promise<Page<T>>, maxPages: number): Promise<{ items: T[]; complete: boolean }> {
  const items: T[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < maxPages; page++) {
    const result: Page<T> = await fetchPage(cursor);
    items.push(...result.data);
    if (!result.has_more || result.next_cursor === null) return { items, complete: true };
    cursor = result.next_cursor;
  }
  return { items, complete: false };
}
