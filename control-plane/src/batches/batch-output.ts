import { createHash } from 'node:crypto';
import type { BatchRow, StoredLineResult } from '@gateway/shared';
import type { BatchView } from './batch-view.js';

/**
 * What the management routes make of the batch rows and line results the proxies use: the batch
 * as the management API shows it, and the lines of its output and error files in OpenAI's
 * output-file shape, byte for byte what `GET /v1/files/{id}/content` on the proxy answers for the
 * same lines (proxy/src/batches/openai-batch-objects.ts), so a download from either place is the
 * same file.
 */

const iso = (seconds: number): string => new Date(seconds * 1000).toISOString();
const isoOrNull = (seconds: number | null): string | null => (seconds === null ? null : iso(seconds));

export function batchView(row: BatchRow): BatchView {
  return {
    id: row.id,
    project_id: row.project_id,
    key_id: row.key_id,
    api: row.api,
    endpoint: row.endpoint,
    status: row.status,
    request_counts: { total: row.total, completed: row.completed, failed: row.failed },
    input_file_id: row.input_file_id,
    output_file_id: row.output_file_id,
    error_file_id: row.error_file_id,
    metadata: row.metadata,
    reason: row.reason,
    created_at: iso(row.created_at),
    in_progress_at: isoOrNull(row.in_progress_at),
    finalizing_at: isoOrNull(row.finalizing_at),
    completed_at: isoOrNull(row.completed_at),
    failed_at: isoOrNull(row.failed_at),
    expired_at: isoOrNull(row.expired_at),
    cancelling_at: isoOrNull(row.cancelling_at),
    cancelled_at: isoOrNull(row.cancelled_at),
    expires_at: iso(row.expires_at),
  };
}

/**
 * `batch_req_` and 32 hex digits derived from the batch and the line, as the proxy derives the
 * line's request id (its batch-line.ts lineRecordId, first attempt, dashes dropped): the same line
 * has the same id wherever its file is read, and on every read.
 */
export function outputLineId(batchId: string, lineNo: number): string {
  const hex = createHash('sha256').update(`${batchId}:${lineNo}`).digest('hex');
  const variant = ((Number.parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `batch_req_${hex.slice(0, 8)}${hex.slice(8, 12)}8${hex.slice(13, 16)}${variant}${hex.slice(17, 20)}${hex.slice(20, 32)}`;
}

/** One line of an output or error file; a line the gateway never ran carries its error in both places, as OpenAI's do. */
export function outputLine(batchId: string, result: StoredLineResult): string {
  const id = outputLineId(batchId, result.line_no);
  if (result.error !== null) {
    const body = { error: { message: result.error.message, type: 'invalid_request_error', param: null, code: result.error.code } };
    return JSON.stringify({ id, custom_id: result.custom_id, response: { status_code: result.status_code, request_id: result.request_id, body }, error: { code: result.error.code, message: result.error.message } });
  }
  return JSON.stringify({ id, custom_id: result.custom_id, response: { status_code: result.status_code, request_id: result.request_id, body: result.body }, error: null });
}

/** The results stream (db/batches.ts batchResultText, a page of lines per chunk) as output-file lines, a page per chunk. */
export async function* outputFileText(batchId: string, results: AsyncIterable<string>): AsyncGenerator<string> {
  for await (const page of results) {
    let text = '';
    for (const line of page.split('\n')) {
      if (line !== '') text += `${outputLine(batchId, JSON.parse(line) as StoredLineResult)}\n`;
    }
    if (text !== '') yield text;
  }
}
