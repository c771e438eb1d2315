/**
 * A batch as the management API shows it (GET /v1/projects/{id}/batches…), for gatewayctl and the
 * dashboard as well. Types only and no imports: the dashboard's bundle takes this file as it is.
 * The statuses are the gateway's own (OpenAI's words) for batches of either API; `api` says whose
 * API made the batch, and so how its clients see it.
 */
export type BatchViewStatus = 'validating' | 'failed' | 'in_progress' | 'finalizing' | 'completed' | 'expired' | 'cancelling' | 'cancelled';

export interface BatchView {
  id: string;
  project_id: string;
  key_id: string;
  api: 'openai' | 'anthropic';
  endpoint: string;
  status: BatchViewStatus;
  request_counts: { total: number; completed: number; failed: number };
  input_file_id: string;
  output_file_id: string | null;
  error_file_id: string | null;
  metadata: Record<string, string> | null;
  reason: { code: string; message: string } | null;
  /** RFC 3339, to the second; null until that moment came. */
  created_at: string;
  in_progress_at: string | null;
  finalizing_at: string | null;
  completed_at: string | null;
  failed_at: string | null;
  expired_at: string | null;
  cancelling_at: string | null;
  cancelled_at: string | null;
  expires_at: string;
}

/** A page of batches, newest first: pass `next_cursor` as `after` for the next one. */
export interface BatchViewPage {
  data: BatchView[];
  next_cursor: string | null;
  has_more: boolean;
}

/** The statuses after which a batch changes no more. */
export const ENDED_BATCH_STATUSES: readonly BatchViewStatus[] = ['completed', 'failed', 'expired', 'cancelled'];
