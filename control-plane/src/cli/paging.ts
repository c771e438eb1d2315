import type { Api } from './api.js';
import type { Page } from '@gateway/shared';
import { flag, integer, text, type CommandContext, type Options } from './command.js';
import type { Query } from './http.js';
import type { Column } from './output.js';

/** The keyset-paged lists (usage, audit, users): one page by default, every page with --all. */
export const PAGING_OPTIONS: Options = {
  limit: { type: 'string', value: '<n>', help: 'records per page, 1–1000 (default 50; 1000 with --all)' },
  all: { type: 'boolean', help: 'follow next_cursor through every page' },
  cursor: { type: 'string', value: '<cursor>', help: 'continue from the next_cursor of an earlier page' },
};

export interface Paging {
  limit: number | undefined;
  all: boolean;
  cursor: string | undefined;
}

export function readPaging(ctx: CommandContext): Paging {
  const all = flag(ctx, 'all');
  return { all, limit: integer(ctx, 'limit', 1) ?? (all ? 1000 : undefined), cursor: text(ctx, 'cursor') };
}

/** With --all the pages joined into one answer of the same shape, the last page's `has_more: false` included. */
export async function fetchPages<T>(api: Api, path: string, query: Query, paging: Paging): Promise<Page<T>> {
  let page = await api.get<Page<T>>(path, { ...query, limit: paging.limit, cursor: paging.cursor });
  if (!paging.all) return page;
  const data = [...page.data];
  while (page.has_more && page.next_cursor !== null) {
    page = await api.get<Page<T>>(path, { ...query, limit: paging.limit, cursor: page.next_cursor });
    data.push(...page.data);
  }
  return { data, next_cursor: null, has_more: false };
}

export async function printPages<T>(ctx: CommandContext, api: Api, path: string, query: Query, paging: Paging, columns: Column<T>[]): Promise<void> {
  const page = await fetchPages<T>(api, path, query, paging);
  ctx.out.list(page, page.data, columns);
  // JSON carries next_cursor itself; the other formats say where the next page is.
  if (page.has_more && ctx.out.format !== 'json') ctx.out.note(`More follow: add --all for every page, or --cursor ${page.next_cursor} for the next one.`);
}
