import { BATCH_EXPIRED, ERROR_CODES, isErrorCode, type BatchRow, type StoredLineResult } from '@gateway/shared';

/**
 * Anthropic's message batch object and the lines of its results, as its Message Batches API
 * words them, made from the control plane's rows. Times are RFC 3339; the results are offered at
 * `results_url` once the batch has ended.
 */
export function messageBatchObject(batch: BatchRow, baseUrl: string): Record<string, unknown> {
  const isEnded = batch.status === 'completed' || batch.status === 'cancelled' || batch.status === 'failed' || batch.status === 'expired';
  const unanswered = batch.total - batch.completed - batch.failed;
  return {
    id: batch.id,
    type: 'message_batch',
    processing_status: isEnded ? 'ended' : batch.status === 'cancelling' ? 'canceling' : 'in_progress',
    request_counts: {
      processing: isEnded ? 0 : unanswered,
      succeeded: batch.completed,
      errored: batch.failed,
      canceled: isEnded && batch.status !== 'expired' ? unanswered : 0,
      expired: batch.status === 'expired' ? unanswered : 0,
    },
    ended_at: iso(batch.completed_at ?? batch.cancelled_at ?? batch.failed_at ?? batch.expired_at),
    created_at: iso(batch.created_at),
    expires_at: iso(batch.expires_at),
    archived_at: null,
    cancel_initiated_at: iso(batch.cancelling_at),
    results_url: isEnded ? `${baseUrl}/v1/messages/batches/${batch.id}/results` : null,
  };
}

/** One line of a batch's results: succeeded with its message, errored with its error, canceled or expired (never run). */
export function resultLine(result: StoredLineResult): string {
  if (result.status_code === 0) return JSON.stringify({ custom_id: result.custom_id, result: { type: 'canceled' } });
  if (result.error?.code === BATCH_EXPIRED.code) return JSON.stringify({ custom_id: result.custom_id, result: { type: 'expired' } });
  if (result.status_code >= 200 && result.status_code < 300) return JSON.stringify({ custom_id: result.custom_id, result: { type: 'succeeded', message: result.body } });
  const error = result.error !== null ? { type: 'error', error: { type: errorType(result.error.code), message: result.error.message } } : result.body;
  return JSON.stringify({ custom_id: result.custom_id, result: { type: 'errored', error } });
}

function errorType(code: string): string {
  return isErrorCode(code) ? ERROR_CODES[code].type : 'api_error';
}

function iso(seconds: number | null): string | null {
  return seconds === null ? null : new Date(seconds * 1000).toISOString();
}
