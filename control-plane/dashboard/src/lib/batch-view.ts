import { ENDED_BATCH_STATUSES, type Batch, type BatchStatus } from '../api/types.js';
import { formatNumber } from './format.js';

/** How a batch reads on the Batches page: its progress, how it ended, its files' names. */
export interface BatchProgress {
  /** Of all lines: answered 2xx, answered otherwise. */
  completedShare: number;
  failedShare: number;
  label: string;
}

export function batchProgress(batch: Pick<Batch, 'request_counts'>): BatchProgress {
  const { total, completed, failed } = batch.request_counts;
  if (total === 0) return { completedShare: 0, failedShare: 0, label: 'No lines' };
  const share = (n: number) => Math.min(1, n / total);
  return { completedShare: share(completed), failedShare: share(failed), label: `${formatNumber(completed)} completed · ${formatNumber(failed)} failed of ${formatNumber(total)}` };
}

export function isRunning(batch: Pick<Batch, 'status'>): boolean {
  return !ENDED_BATCH_STATUSES.includes(batch.status);
}

/** The moment that matters now: when it ended, or while it runs, when its completion window closes. */
export function batchMoment(batch: Batch): { label: string; at: string } {
  if (batch.completed_at !== null) return { label: 'Completed', at: batch.completed_at };
  if (batch.cancelled_at !== null) return { label: 'Cancelled', at: batch.cancelled_at };
  if (batch.failed_at !== null) return { label: 'Failed', at: batch.failed_at };
  if (batch.expired_at !== null) return { label: 'Expired', at: batch.expired_at };
  if (batch.cancelling_at !== null) return { label: 'Cancelling since', at: batch.cancelling_at };
  return { label: 'Ends by', at: batch.expires_at };
}

export const BATCH_API_LABEL: Record<Batch['api'], string> = { openai: 'Batch API', anthropic: 'Message Batches' };

/** Icon and word per status, as the other badges have them, so a state never rests on colour alone. */
export const BATCH_STATUS_LOOK: Record<BatchStatus, { icon: string; label: string; tone: 'ok' | 'running' | 'off' | 'failed' }> = {
  validating: { icon: '◷', label: 'validating', tone: 'running' },
  in_progress: { icon: '◷', label: 'in progress', tone: 'running' },
  finalizing: { icon: '◷', label: 'finalizing', tone: 'running' },
  cancelling: { icon: '⊖', label: 'cancelling', tone: 'running' },
  completed: { icon: '✓', label: 'completed', tone: 'ok' },
  cancelled: { icon: '⊖', label: 'cancelled', tone: 'off' },
  expired: { icon: '⊖', label: 'expired', tone: 'off' },
  failed: { icon: '✕', label: 'failed', tone: 'failed' },
};

/** The name the API gives the download (content-disposition), which a Blob saved by script must be given again. */
export function batchFileName(batch: Pick<Batch, 'id'>, which: 'output' | 'errors'): string {
  return `${batch.id}_${which === 'output' ? 'output' : 'error'}.jsonl`;
}
