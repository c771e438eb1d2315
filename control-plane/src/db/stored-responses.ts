import { DEFAULT_RESPONSES_TTL_DAYS, type StoredResponseRecord } from '@gateway/shared';
import type { JSONValue } from 'postgres';
import type { Queryable } from './connect.js';

/**
 * Stored responses (migration 0020): the Responses API state the proxies keep through the control
 * plane's internal routes. A row belongs to one project for its whole life: writing an id again
 * replaces the row only for the same project. A row is answered until its `expires_at`, set at
 * each write from the project's `responses_ttl_days` (the default when unset), and only while its
 * project is live; expired rows are deleted in batches by StoredResponsePurger.
 */
/** A row: the internal route's record (StoredResponseRecord) with its times as dates. */
export interface StoredResponse extends Omit<StoredResponseRecord, 'v' | 'created_at' | 'expires_at'> {
  created_at: Date;
  expires_at: Date;
}

export type StoredResponseInput = Omit<StoredResponse, 'created_at' | 'expires_at'>;

/** `stored`: written (inserted or replaced); `no_project`: no live project has the id; `conflict`: the id is another project's. */
export type PutOutcome = 'stored' | 'no_project' | 'conflict';

function jsonOrNull(sql: Queryable, value: unknown): ReturnType<Queryable['json']> | null {
  return value === null ? null : sql.json(value as JSONValue);
}

/**
 * Inserts the response, or replaces the row of the same id when it is the same project's (every
 * column written again, created_at and expires_at from now). A row of another project is left as
 * it is. The project's row is read in the same statement, so the life is the setting at the write.
 */
export async function putStoredResponse(sql: Queryable, input: StoredResponseInput): Promise<PutOutcome> {
  const [row] = await sql<{ project: boolean; written: boolean }[]>`
    with p as (
      select id, coalesce(responses_ttl_days, ${DEFAULT_RESPONSES_TTL_DAYS}::int) as ttl_days
      from projects where id = ${input.project_id} and deleted_at is null
    ), written as (
      insert into stored_responses (id, project_id, provider, model, input_items, response, messages, created_at, expires_at)
      select ${input.id}::text, p.id, ${input.provider}::text, ${input.model}::text, ${sql.json(input.input_items as JSONValue)}::jsonb,
        ${jsonOrNull(sql, input.response)}::jsonb, ${jsonOrNull(sql, input.messages)}::jsonb, now(), now() + make_interval(days => p.ttl_days)
      from p
      on conflict (id) do update set
        provider = excluded.provider, model = excluded.model, input_items = excluded.input_items, response = excluded.response,
        messages = excluded.messages, created_at = excluded.created_at, expires_at = excluded.expires_at
      where stored_responses.project_id = excluded.project_id
      returning 1
    )
    select exists (select 1 from p) as project, exists (select 1 from written) as written`;
  if (!row!.project) return 'no_project';
  if (!row!.written) return 'conflict';
  await indexItems(sql, input.id, input.project_id);
  return 'stored';
}

/**
 * Points the response's items (input and output, those with an id) at it, replacing what an
 * earlier write of the same id pointed at. An id both in the input and the output is the output's.
 */
async function indexItems(sql: Queryable, id: string, projectId: string): Promise<void> {
  await sql`delete from stored_response_items where response_id = ${id}`;
  await sql`
    insert into stored_response_items (project_id, id, response_id, place, position)
    select distinct on (item_id) ${projectId}::uuid, item_id, ${id}::text, place, position
    from (
      select e.item ->> 'id' as item_id, 'output' as place, (e.n - 1)::int as position, 0 as rank
      from stored_responses r, jsonb_array_elements(coalesce(r.response -> 'output', '[]'::jsonb)) with ordinality as e(item, n)
      where r.id = ${id} and jsonb_typeof(r.response -> 'output') = 'array' and jsonb_typeof(e.item -> 'id') = 'string'
      union all
      select e.item ->> 'id', 'input', (e.n - 1)::int, 1
      from stored_responses r, jsonb_array_elements(r.input_items) with ordinality as e(item, n)
      where r.id = ${id} and jsonb_typeof(r.input_items) = 'array' and jsonb_typeof(e.item -> 'id') = 'string'
    ) items
    order by item_id, rank
    on conflict (project_id, id) do update set response_id = excluded.response_id, place = excluded.place, position = excluded.position`;
}

/**
 * The project's items of these ids, from its unexpired responses, as they were stored; an id
 * not found is left out.
 */
export async function getStoredItems(sql: Queryable, projectId: string, ids: readonly string[]): Promise<Record<string, unknown>> {
  const rows = await sql<{ id: string; item: unknown }[]>`
    select i.id, case when i.place = 'output' then r.response -> 'output' -> i.position else r.input_items -> i.position end as item
    from stored_response_items i
    join stored_responses r on r.id = i.response_id
    join projects p on p.id = r.project_id
    where i.project_id = ${projectId} and i.id = any(${ids as string[]}::text[]) and r.expires_at > now() and p.deleted_at is null`;
  const items: Record<string, unknown> = {};
  for (const row of rows) if (row.item !== null) items[row.id] = row.item;
  return items;
}

/** The project's unexpired response of this id; null when absent, another project's, expired, or its project deleted. */
export async function getStoredResponse(sql: Queryable, id: string, projectId: string): Promise<StoredResponse | null> {
  const rows = await sql<StoredResponse[]>`
    select r.id, r.project_id, r.provider, r.model, r.input_items, r.response, r.messages, r.created_at, r.expires_at
    from stored_responses r join projects p on p.id = r.project_id
    where r.id = ${id} and r.project_id = ${projectId} and r.expires_at > now() and p.deleted_at is null`;
  return rows[0] ?? null;
}

/** Deletes the project's unexpired response of this id; false when there was none (as get would answer null). */
export async function deleteStoredResponse(sql: Queryable, id: string, projectId: string): Promise<boolean> {
  const rows = await sql`
    delete from stored_responses r using projects p
    where r.id = ${id} and r.project_id = ${projectId} and r.expires_at > now() and p.id = r.project_id and p.deleted_at is null
    returning r.id`;
  return rows.length > 0;
}

/**
 * Deletes up to `limit` expired rows, oldest expiry first; returns how many. Rows another control
 * plane is deleting at the same moment are skipped, not waited for, so replicas purge side by side.
 */
export async function purgeExpiredResponses(sql: Queryable, limit: number): Promise<number> {
  const rows = await sql`
    delete from stored_responses where id in (
      select id from stored_responses where expires_at <= now()
      order by expires_at limit ${limit}
      for update skip locked)
    returning id`;
  return rows.length;
}
