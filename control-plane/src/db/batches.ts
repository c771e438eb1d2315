import type { BatchApi, BatchCreate, BatchFinish, BatchResultsAck, BatchRow, BatchStatus, ClaimedLine, LineResult } from '@gateway/shared';
import type { JSONValue } from 'postgres';
import { CURSOR_ROWS, newFileId, randomAlphanumeric, unixSeconds } from './batch-files.js';
import type { Queryable } from './connect.js';

/**
 * Batches (migration 0022): a batch runs the lines of one processed file, each line a row of
 * batch_lines made with the batch. Runners (in the proxies) claim lines, post their answers and
 * finish the batch; a line keeps its first answer, so a runner that died and is replaced, or a
 * post retried, counts nothing twice. Ending makes the output and error files, whose content is
 * read from the lines here.
 */

/** A batch in one of these moved on for good: it is never run, cancelled or finished again. */
export const ENDED_STATUSES: readonly BatchStatus[] = ['completed', 'failed', 'expired', 'cancelled'];
/** What may still be cancelled, by a client or by the deletion of the key that made it. */
const RUNNING_SQL = "('validating', 'in_progress')";

export const KEY_DELETED_REASON = { code: 'UNAUTHORIZED', message: 'The API key that made the batch was deleted.' } as const;

export function newBatchId(api: BatchApi): string {
  return `${api === 'openai' ? 'batch_' : 'msgbatch_'}${randomAlphanumeric(24)}`;
}

interface BatchRecord {
  id: string;
  project_id: string;
  key_id: string;
  api: BatchApi;
  endpoint: BatchRow['endpoint'];
  input_file_id: string;
  completion_window: string;
  metadata: Record<string, string> | null;
  status: BatchStatus;
  total: number;
  completed: number;
  failed: number;
  output_file_id: string | null;
  error_file_id: string | null;
  reason: { code: string; message: string } | null;
  created_at: Date;
  in_progress_at: Date | null;
  finalizing_at: Date | null;
  completed_at: Date | null;
  failed_at: Date | null;
  expired_at: Date | null;
  cancelling_at: Date | null;
  cancelled_at: Date | null;
  expires_at: Date;
}

const seconds = (at: Date | null): number | null => (at === null ? null : unixSeconds(at));

function toBatchRow(r: BatchRecord): BatchRow {
  return {
    id: r.id,
    project_id: r.project_id,
    key_id: r.key_id,
    api: r.api,
    endpoint: r.endpoint,
    input_file_id: r.input_file_id,
    completion_window: r.completion_window,
    metadata: r.metadata,
    status: r.status,
    total: r.total,
    completed: r.completed,
    failed: r.failed,
    output_file_id: r.output_file_id,
    error_file_id: r.error_file_id,
    reason: r.reason,
    created_at: unixSeconds(r.created_at),
    in_progress_at: seconds(r.in_progress_at),
    finalizing_at: seconds(r.finalizing_at),
    completed_at: seconds(r.completed_at),
    failed_at: seconds(r.failed_at),
    expired_at: seconds(r.expired_at),
    cancelling_at: seconds(r.cancelling_at),
    cancelled_at: seconds(r.cancelled_at),
    expires_at: unixSeconds(r.expires_at),
  };
}

export type CreateBatchOutcome =
  | { batch: BatchRow }
  | { refused: 'no_project' }
  | { refused: 'no_file' }
  | { refused: 'not_usable'; why: string }
  | { refused: 'endpoint_mismatch'; line: number; url: string };

/**
 * Creates the batch, running at once (the proxy validated the lines at upload, so there is no
 * validating phase), with a line row per line of its input file. To be run in a transaction: the
 * file is share-locked, so it cannot be deleted between the checks and the copy of its lines.
 */
export async function createBatch(tx: Queryable, input: Omit<BatchCreate, 'v'>): Promise<CreateBatchOutcome> {
  const project = await tx`select 1 from projects where id = ${input.project_id} and deleted_at is null`;
  if (project.length === 0) return { refused: 'no_project' };
  const [file] = await tx<{ purpose: string; status: string; line_count: number; endpoints: Record<string, number> | null }[]>`
    select purpose, status, line_count, endpoints from batch_files
    where id = ${input.input_file_id} and project_id = ${input.project_id} and deleted_at is null
    for share`;
  if (file === undefined) return { refused: 'no_file' };
  if (file.status !== 'processed') return { refused: 'not_usable', why: 'it is still being uploaded' };
  const purpose = input.api === 'openai' ? 'batch' : 'batch_requests';
  if (file.purpose !== purpose) return { refused: 'not_usable', why: `its purpose is ${file.purpose}, not ${purpose}` };
  if (file.line_count === 0) return { refused: 'not_usable', why: 'it holds no request lines' };
  let mismatch: { line: number; url: string } | null = null;
  for (const [url, line] of Object.entries(file.endpoints ?? {})) {
    if (url !== input.endpoint && (mismatch === null || line < mismatch.line)) mismatch = { line, url };
  }
  if (mismatch !== null) return { refused: 'endpoint_mismatch', ...mismatch };

  const id = newBatchId(input.api);
  const [row] = await tx<BatchRecord[]>`
    insert into batches (id, project_id, key_id, api, endpoint, input_file_id, completion_window, metadata, status, total, in_progress_at, expires_at)
    values (${id}, ${input.project_id}, ${input.key_id}, ${input.api}, ${input.endpoint}, ${input.input_file_id}, ${input.completion_window},
      ${input.metadata === null ? null : tx.json(input.metadata)}, 'in_progress', ${file.line_count}, now(), now() + interval '24 hours')
    returning *`;
  await tx`
    insert into batch_lines (batch_id, line_no)
    select ${id}, line_no from batch_file_lines where file_id = ${input.input_file_id}`;
  return { batch: toBatchRow(row!) };
}

/** The project's batch of this id, or null. */
export async function getBatch(sql: Queryable, id: string, projectId: string): Promise<BatchRow | null> {
  const rows = await sql<BatchRecord[]>`select * from batches where id = ${id} and project_id = ${projectId}`;
  return rows[0] === undefined ? null : toBatchRow(rows[0]);
}

/** The project's batches, newest first, created before the batch `after` (the previous page's last). */
export async function listBatches(
  sql: Queryable,
  projectId: string,
  q: { api?: BatchApi; after?: string; limit: number },
): Promise<{ data: BatchRow[]; has_more: boolean }> {
  const rows = await sql<BatchRecord[]>`
    select * from batches
    where project_id = ${projectId}
      ${q.api === undefined ? sql`` : sql`and api = ${q.api}`}
      ${q.after === undefined ? sql`` : sql`and (created_at, id) < (select created_at, id from batches where id = ${q.after} and project_id = ${projectId})`}
    order by created_at desc, id desc
    limit ${q.limit + 1}`;
  return { data: rows.slice(0, q.limit).map(toBatchRow), has_more: rows.length > q.limit };
}

/** `fresh`: this call cancelled it (false: it was cancelling already). */
export type CancelOutcome = { batch: BatchRow; fresh: boolean } | 'no_batch' | { ended: BatchStatus };

/** A running batch becomes `cancelling` (its runner stops and finishes it); one cancelling already is answered as it is. */
export async function cancelBatch(sql: Queryable, id: string, projectId: string): Promise<CancelOutcome> {
  const [cancelled] = await sql<BatchRecord[]>`
    update batches set status = 'cancelling', cancelling_at = now()
    where id = ${id} and project_id = ${projectId} and status in ${sql.unsafe(RUNNING_SQL)}
    returning *`;
  if (cancelled !== undefined) return { batch: toBatchRow(cancelled), fresh: true };
  const current = await getBatch(sql, id, projectId);
  if (current === null) return 'no_batch';
  return current.status === 'cancelling' ? { batch: current, fresh: false } : { ended: current.status };
}

export type DeleteOutcome = { batch: BatchRow } | 'no_batch' | { running: BatchStatus };

/**
 * Deletes an ended batch with its lines and the files made for it (a Message Batch's requests and
 * both result files; an uploaded input file is the client's and stays). A batch still running is
 * refused: it is cancelled first. Its records keep its id.
 */
export async function deleteBatch(tx: Queryable, id: string, projectId: string): Promise<DeleteOutcome> {
  const [batch] = await tx<BatchRecord[]>`select * from batches where id = ${id} and project_id = ${projectId} for update`;
  if (batch === undefined) return 'no_batch';
  if (!ENDED_STATUSES.includes(batch.status)) return { running: batch.status };
  await tx`delete from batches where id = ${id}`;
  const made = [batch.output_file_id, batch.error_file_id, batch.api === 'anthropic' ? batch.input_file_id : null].filter((f): f is string => f !== null);
  if (made.length > 0) await tx`update batch_files set deleted_at = now() where id = any(${made}::text[]) and deleted_at is null`;
  return { batch: toBatchRow(batch) };
}

/** The batch and the hash its runner sends requests with: null once the key or its project was deleted. */
export async function getBatchRun(sql: Queryable, id: string): Promise<{ batch: BatchRow; key_hash: string | null } | null> {
  const [row] = await sql<(BatchRecord & { key_hash: string | null })[]>`
    select b.*, (
      select k.key_hash from api_keys k join projects p on p.id = k.project_id
      where k.id = b.key_id and k.project_id = b.project_id and k.deleted_at is null and p.deleted_at is null
    ) as key_hash
    from batches b where b.id = ${id}`;
  if (row === undefined) return null;
  return { batch: toBatchRow(row), key_hash: row.key_hash };
}

/**
 * Up to `limit` unanswered lines after `after`, in order, with their input (not those handed to a
 * provider's own batch: they are answered when it is collected, batch-submissions.ts). A line's claimed_at
 * is set by its first claim only (to the millisecond, the unit the records carry): it keys the
 * line's records, which must come out the same when the line is claimed again. Null when there
 * is no such batch.
 */
export async function claimLines(sql: Queryable, id: string, after: number, limit: number): Promise<ClaimedLine[] | null> {
  const [batch] = await sql<{ input_file_id: string }[]>`select input_file_id from batches where id = ${id}`;
  if (batch === undefined) return null;
  const rows = await sql<{ line_no: number; content: string; claimed_at: Date }[]>`
    with picked as (
      select line_no from batch_lines
      where batch_id = ${id} and answered_at is null and submission_id is null and line_no > ${after}
      order by line_no limit ${limit}
    ), claimed as (
      update batch_lines l set claimed_at = coalesce(l.claimed_at, date_trunc('milliseconds', clock_timestamp()))
      from picked, batch_file_lines f
      where l.batch_id = ${id} and l.line_no = picked.line_no and l.answered_at is null
        and f.file_id = ${batch.input_file_id} and f.line_no = l.line_no
      returning l.line_no, l.claimed_at, f.content
    )
    select line_no, content, claimed_at from claimed order by line_no`;
  return rows.map((r) => ({ line_no: r.line_no, content: r.content, claimed_at: r.claimed_at.getTime() }));
}

/**
 * Stores the answers of lines not answered yet (a line answered already keeps its first answer)
 * and counts the new ones in. An ended batch takes no more answers: its files are made. Null
 * when there is no such batch. To be run in a transaction: the batch row is locked against a
 * finish meanwhile.
 */
export async function storeLineResults(tx: Queryable, id: string, results: LineResult[]): Promise<BatchResultsAck | null> {
  const [batch] = await tx<{ status: BatchStatus }[]>`select status from batches where id = ${id} for update`;
  if (batch === undefined) return null;
  if (ENDED_STATUSES.includes(batch.status) || results.length === 0) return { status: batch.status, inserted: 0 };
  const answers = results.map(({ line_no, status_code, request_id, body }) => ({ line_no, status_code, request_id, body }));
  // The line numbers bound the index scan and the answers are read once: with a batch's lines just
  // inserted (no statistics yet) the planner otherwise walks every line of the batch per answer.
  const lineNos = results.map((r) => r.line_no);
  const [counts] = await tx<{ ok: number; other: number }[]>`
    with r as materialized (
      select * from jsonb_to_recordset(${tx.json(answers as JSONValue)}::jsonb) as r(line_no int, status_code int, request_id text, body jsonb)
    ), answered as (
      update batch_lines l set status_code = r.status_code, request_id = r.request_id, body = r.body, answered_at = now()
      from r
      where l.batch_id = ${id} and l.line_no = any(${lineNos}::int[]) and l.line_no = r.line_no and l.answered_at is null
      returning l.status_code
    )
    select count(*) filter (where status_code between 200 and 299)::int as ok,
           count(*) filter (where status_code not between 200 and 299)::int as other
    from answered`;
  const { ok, other } = counts!;
  if (ok + other === 0) return { status: batch.status, inserted: 0 };
  const [updated] = await tx<{ status: BatchStatus }[]>`
    update batches set completed = completed + ${ok}, failed = failed + ${other} where id = ${id} returning status`;
  return { status: updated!.status, inserted: ok + other };
}

/**
 * Ends the batch as `outcome`: answers the lines left with `unanswered` when given, makes the
 * output file (2xx lines) and the error file (the others) when they would hold a line, and
 * stamps the times. An ended batch is answered as it is, so a finish retried changes nothing.
 * `reason` null keeps the reason the batch has (a deleted key's). Null when there is no such
 * batch. To be run in a transaction.
 */
/** The batch as it ended; `fresh`: this call ended it (false: it had ended before). */
export async function finishBatch(tx: Queryable, id: string, finish: Omit<BatchFinish, 'v'>): Promise<{ batch: BatchRow; fresh: boolean } | null> {
  const [batch] = await tx<BatchRecord[]>`select * from batches where id = ${id} for update`;
  if (batch === undefined) return null;
  if (ENDED_STATUSES.includes(batch.status)) return { batch: toBatchRow(batch), fresh: false };
  let filled = 0;
  if (finish.unanswered !== null) {
    const { status_code, code, message } = finish.unanswered;
    const [row] = await tx<{ n: number }[]>`
      with filled as (
        update batch_lines set status_code = ${status_code}, error = ${tx.json({ code, message })}, body = null, answered_at = now()
        where batch_id = ${id} and answered_at is null
        returning 1
      )
      select count(*)::int as n from filled`;
    filled = row!.n;
  }
  const [lines] = await tx<{ ok: number; errors: number }[]>`
    select count(*) filter (where status_code between 200 and 299)::int as ok, count(*) filter (where status_code >= 300)::int as errors
    from batch_lines where batch_id = ${id}`;
  const makeFile = async (purpose: 'batch_output' | 'batch_error', lineCount: number): Promise<string | null> => {
    if (lineCount === 0) return null;
    const fileId = newFileId();
    await tx`
      insert into batch_files (id, project_id, key_id, purpose, filename, line_count, status, batch_id)
      values (${fileId}, ${batch.project_id}, ${batch.key_id}, ${purpose}, ${`${id}_${purpose === 'batch_output' ? 'output' : 'error'}.jsonl`},
        ${lineCount}, 'processed', ${id})`;
    return fileId;
  };
  const outputFileId = await makeFile('batch_output', lines!.ok);
  const errorFileId = await makeFile('batch_error', lines!.errors);
  const { outcome } = finish;
  const [row] = await tx<BatchRecord[]>`
    update batches set
      status = ${outcome},
      reason = coalesce(${finish.reason === null ? null : tx.json(finish.reason)}::jsonb, reason),
      -- Lines an expired batch never ran are counted apart from the failed ones (Anthropic's expired count).
      failed = failed + ${outcome === 'expired' ? 0 : filled},
      finalizing_at = now(),
      completed_at = ${outcome === 'completed' ? tx`now()` : tx`completed_at`},
      cancelled_at = ${outcome === 'cancelled' ? tx`now()` : tx`cancelled_at`},
      failed_at = ${outcome === 'failed' ? tx`now()` : tx`failed_at`},
      expired_at = ${outcome === 'expired' ? tx`now()` : tx`expired_at`},
      output_file_id = ${outputFileId},
      error_file_id = ${errorFileId}
    where id = ${id}
    returning *`;
  return { batch: toBatchRow(row!), fresh: true };
}

/**
 * Marks the running batches of a key being deleted (or of every key of a project being deleted)
 * `cancelling` with reason UNAUTHORIZED: nothing may run on a key that is gone. Called in the
 * deletion's transaction; returns how many.
 */
export async function cancelBatchesOfDeletedKeys(sql: Queryable, of: { keyId: string } | { projectId: string }): Promise<number> {
  const whose = 'keyId' in of ? sql`key_id = ${of.keyId}` : sql`project_id = ${of.projectId}`;
  const rows = await sql`
    update batches set status = 'cancelling', cancelling_at = now(), reason = ${sql.json(KEY_DELETED_REASON)}
    where ${whose} and status in ${sql.unsafe(RUNNING_SQL)}
    returning id`;
  return rows.length;
}

/** Which lines a results stream carries: all of them (the batch's results), or those of its output or error file. */
export type ResultLines = 'all' | 'output' | 'error';

/**
 * A JSON escape PostgreSQL's json types refuse (U+0000, a UTF-16 surrogate: a lone one is refused,
 * and a pair is matched too) may sit anywhere in a line; such a line's custom_id is read here
 * instead, so one odd line never breaks the stream of the others.
 */
const ESCAPE_POSTGRES_REFUSES = String.raw`\\u(0000|[dD][89a-fA-F])`;

/**
 * The batch's lines as StoredLineResult JSON lines, in order, a page of rows at a time. A line
 * never answered has status_code 0. `body` and `error` are copied as PostgreSQL's JSON text,
 * never parsed here.
 */
export async function* batchResultText(sql: Queryable, id: string, which: ResultLines): AsyncGenerator<string> {
  const filter =
    which === 'output' ? sql`and l.status_code between 200 and 299` : which === 'error' ? sql`and l.status_code >= 300` : sql``;
  const pages = sql<{ line_no: number; custom_id: string | null; raw: string | null; status_code: number | null; request_id: string | null; body: string | null; error: string | null }[]>`
    select l.line_no,
      case when f.content ~ ${ESCAPE_POSTGRES_REFUSES} then null else f.content::jsonb ->> 'custom_id' end as custom_id,
      case when f.content ~ ${ESCAPE_POSTGRES_REFUSES} then f.content end as raw,
      l.status_code, l.request_id, l.body::text as body, l.error::text as error
    from batch_lines l
    join batches b on b.id = l.batch_id
    left join batch_file_lines f on f.file_id = b.input_file_id and f.line_no = l.line_no
    where l.batch_id = ${id} ${filter}
    order by l.line_no`.cursor(CURSOR_ROWS);
  for await (const page of pages) {
    let text = '';
    for (const r of page) {
      const customId = r.custom_id ?? customIdOf(r.raw);
      text += `{"line_no":${r.line_no},"custom_id":${JSON.stringify(customId)},"status_code":${r.status_code ?? 0},"request_id":${JSON.stringify(r.request_id)},"body":${r.body ?? 'null'},"error":${r.error ?? 'null'}}\n`;
    }
    yield text;
  }
}

/** custom_id as `->>` reads it: a string as is, another value as its JSON; '' when there is none. */
function customIdOf(line: string | null): string {
  if (line === null) return '';
  try {
    const id = (JSON.parse(line) as { custom_id?: unknown } | null)?.custom_id;
    if (id === undefined || id === null) return '';
    return typeof id === 'string' ? id : JSON.stringify(id);
  } catch {
    return '';
  }
}

/**
 * Deletes up to `limit` batches, their lines with them (the foreign key cascades), of projects
 * deleted more than `days` days ago; returns how many. Batches another control plane is deleting
 * at the same moment are skipped, not waited for. Few at a time: one batch may hold tens of
 * thousands of lines.
 */
export async function purgeBatchesOfDeletedProjects(sql: Queryable, days: number, limit: number): Promise<number> {
  const rows = await sql`
    delete from batches where id in (
      select b.id from batches b join projects p on p.id = b.project_id
      where p.deleted_at < now() - make_interval(days => ${days})
      limit ${limit}
      for update of b skip locked)
    returning id`;
  return rows.length;
}
