import type { BatchSubmission, ClaimedLine } from '@gateway/shared';
import { randomAlphanumeric, unixSeconds } from './batch-files.js';
import type { Queryable } from './connect.js';

/**
 * The provider batches a batch's lines were handed to (migration 0024, provider-run batches): a
 * runner records each one as soon as the provider accepted it, with the lines it holds, so those
 * lines are never claimed again (a runner that takes the batch over polls the provider's batch
 * instead of sending the lines twice); their answers come in through the results route when the
 * submission is collected.
 */
interface SubmissionRecord {
  id: string;
  batch_id: string;
  provider: string;
  upstream_id: string;
  line_count: number;
  status: BatchSubmission['status'];
  created_at: Date;
}

function toSubmission(r: SubmissionRecord): BatchSubmission {
  return { id: r.id, batch_id: r.batch_id, provider: r.provider, upstream_id: r.upstream_id, line_count: r.line_count, status: r.status, created_at: unixSeconds(r.created_at) };
}

/**
 * Records the provider's batch and marks its lines (those not answered and not handed off
 * already). Sent again with the same upstream id: the submission made the first time. Null when
 * there is no such batch. To be run in a transaction.
 */
export async function addSubmission(tx: Queryable, batchId: string, s: { provider: string; upstream_id: string; line_nos: number[] }): Promise<BatchSubmission | null> {
  const [batch] = await tx`select 1 from batches where id = ${batchId} for update`;
  if (batch === undefined) return null;
  const [known] = await tx<SubmissionRecord[]>`select * from batch_submissions where batch_id = ${batchId} and provider = ${s.provider} and upstream_id = ${s.upstream_id}`;
  if (known !== undefined) return toSubmission(known);
  const id = `sub_${randomAlphanumeric(24)}`;
  const [row] = await tx<SubmissionRecord[]>`
    insert into batch_submissions (id, batch_id, provider, upstream_id, line_count, status)
    values (${id}, ${batchId}, ${s.provider}, ${s.upstream_id}, ${s.line_nos.length}, 'submitted')
    returning *`;
  await tx`
    update batch_lines set submission_id = ${id}
    where batch_id = ${batchId} and line_no = any(${s.line_nos}::int[]) and answered_at is null and submission_id is null`;
  return toSubmission(row!);
}

/** The batch's submissions, oldest first. */
export async function listSubmissions(sql: Queryable, batchId: string): Promise<BatchSubmission[]> {
  const rows = await sql<SubmissionRecord[]>`select * from batch_submissions where batch_id = ${batchId} order by created_at, id`;
  return rows.map(toSubmission);
}

/** Nothing more is collected from the submission; false when there is no such submission. */
export async function endSubmission(sql: Queryable, batchId: string, id: string, status: 'collected' | 'cancelled'): Promise<boolean> {
  const rows = await sql`
    update batch_submissions set status = ${status}, ended_at = coalesce(ended_at, now())
    where id = ${id} and batch_id = ${batchId}
    returning 1`;
  return rows.length > 0;
}

/**
 * The input of lines not answered yet, in order, each with the moment it was first claimed (which
 * keys its records): those named, or a page of a submission's. Null when there is no such batch.
 */
export async function readLines(
  sql: Queryable,
  batchId: string,
  which: { lineNos: number[] } | { submissionId: string; after: number; limit: number },
): Promise<ClaimedLine[] | null> {
  const [batch] = await sql<{ input_file_id: string }[]>`select input_file_id from batches where id = ${batchId}`;
  if (batch === undefined) return null;
  const lines =
    'lineNos' in which
      ? sql`l.line_no = any(${which.lineNos}::int[])`
      : sql`l.submission_id = ${which.submissionId} and l.line_no > ${which.after}`;
  const rows = await sql<{ line_no: number; content: string; claimed_at: Date | null }[]>`
    select l.line_no, f.content, l.claimed_at
    from batch_lines l join batch_file_lines f on f.file_id = ${batch.input_file_id} and f.line_no = l.line_no
    where l.batch_id = ${batchId} and ${lines} and l.answered_at is null
    order by l.line_no
    ${'lineNos' in which ? sql`` : sql`limit ${which.limit}`}`;
  return rows.map((r) => ({ line_no: r.line_no, content: r.content, claimed_at: (r.claimed_at ?? new Date()).getTime() }));
}
