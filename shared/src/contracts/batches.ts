/**
 * Files and batches (DESIGN §8 "Batches and files"): what the proxy and the control plane say to
 * each other over the control plane's internal routes (`/internal/v1/files…`, `/internal/v1/batches…`,
 * INTERNAL_TOKEN), since the proxy never reaches PostgreSQL. The public shapes (OpenAI's file and
 * batch objects, Anthropic's message batch) are rendered by the proxy from these rows.
 */

/** The endpoints a batch's lines may call (OpenAI's `endpoint`; Anthropic batches are `/v1/messages`). */
export const BATCH_ENDPOINTS = ['/v1/chat/completions', '/v1/embeddings', '/v1/responses', '/v1/messages'] as const;
export type BatchEndpoint = (typeof BATCH_ENDPOINTS)[number];

/** Whose API made the batch: its ids, objects and results are worded in that API's shape. */
export type BatchApi = 'openai' | 'anthropic';

/**
 * `batch`: uploaded by a client; `batch_output` / `batch_error`: made by a batch when it ends
 * (their content is the batch's results); `batch_requests`: the lines of an Anthropic batch
 * (its `requests`), never listed.
 */
export type FilePurpose = 'batch' | 'batch_output' | 'batch_error' | 'batch_requests';

/** `uploading` until the last line is in (never listed or readable), then `processed`. */
export type FileStatus = 'uploading' | 'processed';

export interface FileRow {
  id: string;
  project_id: string;
  purpose: FilePurpose;
  filename: string;
  bytes: number;
  line_count: number;
  status: FileStatus;
  /** The batch whose results a `batch_output` / `batch_error` file holds; null otherwise. */
  batch_id: string | null;
  /** Unix seconds. */
  created_at: number;
  /** Unix seconds; null: kept until deleted. */
  expires_at: number | null;
}

/** POST /internal/v1/files: a file is opened; its lines follow. */
export interface FileCreate {
  v: 1;
  project_id: string;
  key_id: string;
  purpose: 'batch' | 'batch_requests';
  filename: string;
}

/** POST /internal/v1/files/{id}/lines: lines `first_line`, `first_line + 1`, … (numbered from 0), each one JSON text. Sent again: nothing changes. */
export interface FileLines {
  v: 1;
  project_id: string;
  first_line: number;
  lines: string[];
}

/** POST /internal/v1/files/{id}/complete: every line is in. `endpoints`: each `url` the lines call, with the first line (from 0) that calls it. */
export interface FileComplete {
  v: 1;
  project_id: string;
  bytes: number;
  line_count: number;
  endpoints: Record<string, number>;
}

/**
 * OpenAI's batch statuses; an Anthropic batch is `in_progress` (validating, in_progress,
 * finalizing), `canceling` (cancelling) or `ended` (the rest).
 */
export type BatchStatus = 'validating' | 'failed' | 'in_progress' | 'finalizing' | 'completed' | 'expired' | 'cancelling' | 'cancelled';

export interface BatchRow {
  id: string;
  project_id: string;
  key_id: string;
  api: BatchApi;
  endpoint: BatchEndpoint;
  input_file_id: string;
  completion_window: string;
  metadata: Record<string, string> | null;
  status: BatchStatus;
  /** Lines in the input file. */
  total: number;
  /** Lines answered 2xx. */
  completed: number;
  /** Lines answered otherwise. */
  failed: number;
  output_file_id: string | null;
  error_file_id: string | null;
  /** Why the batch failed or was cancelled by the gateway (a deleted key: `UNAUTHORIZED`); null otherwise. */
  reason: { code: string; message: string } | null;
  /** Unix seconds; null until that moment came. */
  created_at: number;
  in_progress_at: number | null;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
  expires_at: number;
}

/** POST /internal/v1/batches. 400 `BATCH_ENDPOINT_MISMATCH` naming the first line whose url is not `endpoint`. */
export interface BatchCreate {
  v: 1;
  project_id: string;
  key_id: string;
  api: BatchApi;
  endpoint: BatchEndpoint;
  input_file_id: string;
  completion_window: string;
  metadata: Record<string, string> | null;
}

/** GET /internal/v1/batches/{id}/run: what a runner needs; `key_hash` is null once the key is deleted. */
export interface BatchRun {
  batch: BatchRow;
  key_hash: string | null;
}

/**
 * One line handed to a runner (POST /internal/v1/batches/{id}/claim): its input, and the moment
 * it was first claimed (Unix ms), fixed from then on: the line's usage record and audit event
 * carry it, so a line run again after its runner died writes records the writer already holds.
 */
export interface ClaimedLine {
  line_no: number;
  content: string;
  claimed_at: number;
}

export interface BatchClaim {
  v: 1;
  /** Lines after this one (from 0; -1: from the first). */
  after: number;
  limit: number;
}

/** How one line was answered. `body` is the answer's JSON as the client would have had it. */
export interface LineResult {
  line_no: number;
  custom_id: string;
  status_code: number;
  request_id: string;
  body: unknown;
}

/** POST /internal/v1/batches/{id}/results: a line already answered keeps its first answer. */
export interface BatchResults {
  v: 1;
  results: LineResult[];
}

/** What the results route answers: the batch's status now (a runner stops at `cancelling`). */
export interface BatchResultsAck {
  status: BatchStatus;
  inserted: number;
}

/**
 * POST /internal/v1/batches/{id}/finish: the batch ends `completed`, `cancelled`, `failed` or
 * `expired` (its completion window passed first).
 * `unanswered`, when set, answers every line not answered yet with that error (a deleted key's
 * `UNAUTHORIZED`); its output and error files are made from the results.
 */
/** The error a line gets when its batch's completion window passed before it ran (OpenAI's code). */
export const BATCH_EXPIRED = { code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' } as const;

export interface BatchFinish {
  v: 1;
  outcome: 'completed' | 'cancelled' | 'failed' | 'expired';
  reason: { code: string; message: string } | null;
  unanswered: { status_code: number; code: string; message: string } | null;
}

/**
 * One line as the results routes stream it (JSON lines, ordered by line). `status_code` 0: never
 * answered (the batch was cancelled first). `error`: the gateway's own answer for a line it never
 * ran (`unanswered` of BatchFinish), `body` then null.
 */
export interface StoredLineResult {
  line_no: number;
  custom_id: string;
  status_code: number;
  request_id: string | null;
  body: unknown;
  error: { code: string; message: string } | null;
}

/**
 * A batch made at a provider's own batch API from lines the gateway admitted (a provider entry's
 * `batch: native`). `upstream_id` is the provider's id for it, used only between the gateway and
 * that provider.
 */
export interface BatchSubmission {
  id: string;
  batch_id: string;
  /** The provider entry's name (providers file). */
  provider: string;
  upstream_id: string;
  line_count: number;
  status: 'submitted' | 'collected' | 'cancelled';
  /** Unix seconds. */
  created_at: number;
}

/** POST /internal/v1/batches/{id}/submissions: the lines (from 0) the provider's batch `upstream_id` holds. */
export interface SubmissionCreate {
  v: 1;
  provider: string;
  upstream_id: string;
  line_nos: number[];
}

/** POST /internal/v1/batches/{id}/submissions/{sub}/end: nothing more is collected from it. */
export interface SubmissionEnd {
  v: 1;
  status: 'collected' | 'cancelled';
}

/**
 * POST /internal/v1/batches/{id}/lines: the input of lines not answered yet, either those named
 * (`line_nos`, from 0) or a page of a submission's (`submission_id`, after line `after`, `limit`).
 */
export type LinesRead = { v: 1; line_nos: number[] } | { v: 1; submission_id: string; after: number; limit: number };

/** BullMQ job of the batches queue: one per batch (its id is the job id). */
export interface BatchJob {
  v: 1;
  batch_id: string;
}
