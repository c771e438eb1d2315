import { randomBytes } from 'node:crypto';
import type { FileComplete, FilePurpose, FileRow, FileStatus } from '@gateway/shared';
import type { Queryable } from './connect.js';

/**
 * Batch files (migration 0022): what clients upload for a batch (`batch`, or an Anthropic batch's
 * `batch_requests`), kept as numbered lines, and what a batch makes when it ends (`batch_output`,
 * `batch_error`), whose content is read from the batch's results (db/batches.ts). A file is only
 * listed, read or used once `processed`; deletion is soft, so a batch running on it keeps its lines.
 */

/** Rows a streamed read fetches at a time: the memory one slow reader holds. */
export const CURSOR_ROWS = 500;

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** 4 × 62: bytes at or above it are dropped, so every character is equally likely. */
const UNBIASED_BELOW = 248;

/** `length` characters of [A-Za-z0-9] from the system's random source. */
export function randomAlphanumeric(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < UNBIASED_BELOW && out.length < length) out += ALPHABET[byte % ALPHABET.length];
    }
  }
  return out;
}

export function newFileId(): string {
  return `file-${randomAlphanumeric(24)}`;
}

interface FileRecord {
  id: string;
  project_id: string;
  purpose: FilePurpose;
  filename: string;
  bytes: bigint | number;
  line_count: number;
  status: FileStatus;
  batch_id: string | null;
  created_at: Date;
  expires_at: Date | null;
}

const FILE_COLUMNS = 'id, project_id, purpose, filename, bytes, line_count, status, batch_id, created_at, expires_at';

export function unixSeconds(at: Date): number {
  return Math.floor(at.getTime() / 1000);
}

function toFileRow(r: FileRecord): FileRow {
  return {
    id: r.id,
    project_id: r.project_id,
    purpose: r.purpose,
    filename: r.filename,
    bytes: Number(r.bytes),
    line_count: r.line_count,
    status: r.status,
    batch_id: r.batch_id,
    created_at: unixSeconds(r.created_at),
    expires_at: r.expires_at === null ? null : unixSeconds(r.expires_at),
  };
}

/** Opens a file, `uploading`; null when the project does not exist or was deleted. */
export async function createFile(
  sql: Queryable,
  input: { project_id: string; key_id: string; purpose: 'batch' | 'batch_requests'; filename: string },
): Promise<FileRow | null> {
  const rows = await sql<FileRecord[]>`
    insert into batch_files (id, project_id, key_id, purpose, filename, status)
    select ${newFileId()}, id, ${input.key_id}, ${input.purpose}, ${input.filename}, 'uploading'
    from projects where id = ${input.project_id} and deleted_at is null
    returning ${sql.unsafe(FILE_COLUMNS)}`;
  return rows[0] === undefined ? null : toFileRow(rows[0]);
}

/**
 * Adds lines `firstLine`, `firstLine + 1`, … to a file of the project still uploading; a line
 * already there keeps its first text, so a call sent again changes nothing. False when there is
 * no such file. The file's row is share-locked: a completion waits for the lines being added.
 */
export async function appendFileLines(sql: Queryable, fileId: string, projectId: string, firstLine: number, lines: string[]): Promise<boolean> {
  const [row] = await sql<{ found: boolean }[]>`
    with f as (
      select id from batch_files
      where id = ${fileId} and project_id = ${projectId} and status = 'uploading' and deleted_at is null
      for share
    ), added as (
      insert into batch_file_lines (file_id, line_no, content)
      select f.id, ${firstLine}::int + (l.n - 1)::int, l.content
      from f, unnest(${sql.array(lines)}::text[]) with ordinality as l(content, n)
      on conflict do nothing
    )
    select exists (select 1 from f) as found`;
  return row!.found;
}

export type CompleteOutcome = { file: FileRow } | 'no_file' | 'lines_missing';

/**
 * Marks an uploading file `processed` with its size and endpoints, once lines 0 … line_count - 1
 * are all in; a file completed already is answered as it is (a completion retried). To be run in
 * a transaction: the row stays locked from the count to the update.
 */
export async function completeFile(tx: Queryable, fileId: string, projectId: string, done: Omit<FileComplete, 'v' | 'project_id'>): Promise<CompleteOutcome> {
  const [file] = await tx<{ status: FileStatus }[]>`
    select status from batch_files where id = ${fileId} and project_id = ${projectId} and deleted_at is null for update`;
  if (file === undefined) return 'no_file';
  if (file.status === 'processed') {
    const [row] = await tx<FileRecord[]>`select ${tx.unsafe(FILE_COLUMNS)} from batch_files where id = ${fileId}`;
    return { file: toFileRow(row!) };
  }
  const [stored] = await tx<{ n: number; last: number | null }[]>`
    select count(*)::int as n, max(line_no) as last from batch_file_lines where file_id = ${fileId}`;
  // Numbers are unique and never negative: n of them ending at n - 1 are exactly 0 … n - 1.
  if (stored!.n !== done.line_count || (stored!.n > 0 && stored!.last !== stored!.n - 1)) return 'lines_missing';
  const [row] = await tx<FileRecord[]>`
    update batch_files set status = 'processed', bytes = ${done.bytes}, line_count = ${done.line_count}, endpoints = ${tx.json(done.endpoints)}
    where id = ${fileId}
    returning ${tx.unsafe(FILE_COLUMNS)}`;
  return { file: toFileRow(row!) };
}

/** Whether a file can be read: processed, not deleted, not expired. */
const READABLE = 'status = \'processed\' and deleted_at is null and (expires_at is null or expires_at > now())';

export interface FileListQuery {
  purpose?: string;
  after?: string;
  limit: number;
  order: 'asc' | 'desc';
}

/**
 * The project's readable files, newest first unless `order` is asc, from after the file `after`
 * (created_at then id, the list's own order). Never a batch's requests (`batch_requests`): they
 * are the Anthropic batch's, not the client's files.
 */
export async function listFiles(sql: Queryable, projectId: string, q: FileListQuery): Promise<{ data: FileRow[]; has_more: boolean }> {
  const direction = sql.unsafe(q.order === 'asc' ? 'asc' : 'desc');
  const after =
    q.after === undefined
      ? sql``
      : q.order === 'asc'
        ? sql`and (created_at, id) > (select created_at, id from batch_files where id = ${q.after} and project_id = ${projectId})`
        : sql`and (created_at, id) < (select created_at, id from batch_files where id = ${q.after} and project_id = ${projectId})`;
  const rows = await sql<FileRecord[]>`
    select ${sql.unsafe(FILE_COLUMNS)} from batch_files
    where project_id = ${projectId} and ${sql.unsafe(READABLE)} and purpose <> 'batch_requests'
      ${q.purpose === undefined ? sql`` : sql`and purpose = ${q.purpose}`}
      ${after}
    order by created_at ${direction}, id ${direction}
    limit ${q.limit + 1}`;
  return { data: rows.slice(0, q.limit).map(toFileRow), has_more: rows.length > q.limit };
}

/** The project's readable file of this id; null when absent, uploading, deleted or another project's. */
export async function getFile(sql: Queryable, fileId: string, projectId: string): Promise<FileRow | null> {
  const rows = await sql<FileRecord[]>`
    select ${sql.unsafe(FILE_COLUMNS)} from batch_files
    where id = ${fileId} and project_id = ${projectId} and ${sql.unsafe(READABLE)}`;
  return rows[0] === undefined ? null : toFileRow(rows[0]);
}

/** Marks the project's file deleted, an upload under way included (which ends it); false when there was none. */
export async function deleteFile(sql: Queryable, fileId: string, projectId: string): Promise<boolean> {
  const rows = await sql`
    update batch_files set deleted_at = now()
    where id = ${fileId} and project_id = ${projectId} and deleted_at is null
    returning id`;
  return rows.length > 0;
}

/** An uploaded file's lines as they came, each followed by "\n", in order; a page of rows at a time. */
export async function* uploadedFileText(sql: Queryable, fileId: string): AsyncGenerator<string> {
  const pages = sql<{ content: string }[]>`select content from batch_file_lines where file_id = ${fileId} order by line_no`.cursor(CURSOR_ROWS);
  for await (const page of pages) {
    let text = '';
    for (const row of page) text += `${row.content}\n`;
    yield text;
  }
}

/**
 * Deletes up to `limit` files, their lines with them (the foreign key cascades), of projects
 * deleted more than `days` days ago, whatever their state; returns how many. Skips the files
 * another control plane is deleting at the same moment.
 */
export async function purgeFilesOfDeletedProjects(sql: Queryable, days: number, limit: number): Promise<number> {
  const rows = await sql`
    delete from batch_files where id in (
      select f.id from batch_files f join projects p on p.id = f.project_id
      where p.deleted_at < now() - make_interval(days => ${days})
      limit ${limit}
      for update of f skip locked)
    returning id`;
  return rows.length;
}
