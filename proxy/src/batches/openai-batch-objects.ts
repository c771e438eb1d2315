import { BATCH_EXPIRED, type BatchRow, type FileRow, type StoredLineResult } from '@gateway/shared';
import { lineRecordId } from './batch-line.js';

/**
 * OpenAI's file and batch objects and the lines of a batch's output and error files, as its API
 * reference words them, made from the control plane's rows.
 */
export function fileObject(file: FileRow): Record<string, unknown> {
  return {
    id: file.id,
    object: 'file',
    bytes: file.bytes,
    created_at: file.created_at,
    expires_at: file.expires_at,
    filename: file.filename,
    purpose: file.purpose,
    status: file.status,
    status_details: null,
  };
}

export function batchObject(batch: BatchRow): Record<string, unknown> {
  return {
    id: batch.id,
    object: 'batch',
    endpoint: batch.endpoint,
    errors: batch.reason === null || batch.status !== 'failed' ? null : { object: 'list', data: [{ code: batch.reason.code, message: batch.reason.message, param: null, line: null }] },
    input_file_id: batch.input_file_id,
    completion_window: batch.completion_window,
    status: batch.status,
    output_file_id: batch.output_file_id,
    error_file_id: batch.error_file_id,
    created_at: batch.created_at,
    in_progress_at: batch.in_progress_at,
    expires_at: batch.expires_at,
    finalizing_at: batch.finalizing_at,
    completed_at: batch.completed_at,
    failed_at: batch.failed_at,
    expired_at: batch.expired_at,
    cancelling_at: batch.cancelling_at,
    cancelled_at: batch.cancelled_at,
    // OpenAI counts the requests an expired batch never ran as failed.
    request_counts: { total: batch.total, completed: batch.completed, failed: batch.status === 'expired' ? batch.total - batch.completed : batch.failed },
    metadata: batch.metadata,
  };
}

/**
 * One line of an output or error file: the line's answer as its endpoint gave it, or, for a line
 * the gateway never ran (the key was deleted first), the gateway's error in the same place.
 */
export function outputLine(batchId: string, result: StoredLineResult): string {
  const id = `batch_req_${lineRecordId(batchId, result.line_no).replaceAll('-', '')}`;
  if (result.error?.code === BATCH_EXPIRED.code) return JSON.stringify({ id, custom_id: result.custom_id, response: null, error: result.error });
  if (result.error !== null) {
    const body = { error: { message: result.error.message, type: 'invalid_request_error', param: null, code: result.error.code } };
    return JSON.stringify({ id, custom_id: result.custom_id, response: { status_code: result.status_code, request_id: result.request_id, body }, error: { code: result.error.code, message: result.error.message } });
  }
  return JSON.stringify({ id, custom_id: result.custom_id, response: { status_code: result.status_code, request_id: result.request_id, body: result.body }, error: null });
}

/** A list page in OpenAI's shape. */
export function listObject(data: Record<string, unknown>[], hasMore: boolean): Record<string, unknown> {
  return { object: 'list', data, first_id: (data[0]?.id as string | undefined) ?? null, last_id: (data.at(-1)?.id as string | undefined) ?? null, has_more: hasMore };
}
