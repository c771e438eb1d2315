import type { Readable } from 'node:stream';
import {
  Errors,
  type BatchClaim,
  type BatchCreate,
  type BatchFinish,
  type BatchResults,
  type BatchResultsAck,
  type BatchRow,
  type BatchRun,
  type BatchSubmission,
  type ClaimedLine,
  type ErrorBody,
  type FileComplete,
  type FileCreate,
  type FileLines,
  type FileRow,
  GatewayError,
  isErrorCode,
  type LineResult,
  type LinesRead,
  type SubmissionCreate,
  type SubmissionEnd,
} from '@gateway/shared';
import { Pool } from 'undici';

/**
 * Files and batches, kept by the control plane in PostgreSQL and reached over its internal routes
 * (`/internal/v1/files…`, `/internal/v1/batches…`, the deployment's INTERNAL_TOKEN): the proxy
 * never talks to PostgreSQL. Every read a client asks for names the key's project, so another
 * project's id is not found; the runner's routes (claim, results, finish) name the batch alone.
 * A refusal the control plane words (a mismatched line, a batch that has ended) comes back as the
 * GatewayError it sent; anything else is "unavailable, retry".
 */
const TIMEOUT_MS = 30_000;

export interface Page<T> {
  data: T[];
  has_more: boolean;
}

export class BatchStore {
  private readonly pool: Pool;
  private readonly authorization: string;

  constructor(baseUrl: string, token: string) {
    this.pool = new Pool(baseUrl, { connections: 16, headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS, connectTimeout: 3_000 });
    this.authorization = `Bearer ${token}`;
  }

  createFile(file: Omit<FileCreate, 'v'>): Promise<FileRow> {
    return this.json<FileRow>('POST', '/internal/v1/files', { v: 1, ...file }, 201);
  }

  async appendLines(id: string, lines: Omit<FileLines, 'v'>): Promise<void> {
    await this.json('POST', `/internal/v1/files/${encodeURIComponent(id)}/lines`, { v: 1, ...lines }, 204);
  }

  completeFile(id: string, done: Omit<FileComplete, 'v'>): Promise<FileRow> {
    return this.json<FileRow>('POST', `/internal/v1/files/${encodeURIComponent(id)}/complete`, { v: 1, ...done });
  }

  /** The file of this project, or null (absent, deleted, still uploading, another project's). */
  getFile(id: string, projectId: string): Promise<FileRow | null> {
    return this.found(this.json<FileRow>('GET', `/internal/v1/files/${encodeURIComponent(id)}?${project(projectId)}`));
  }

  listFiles(projectId: string, query: URLSearchParams): Promise<Page<FileRow>> {
    query.set('project_id', projectId);
    return this.json<Page<FileRow>>('GET', `/internal/v1/files?${query}`);
  }

  /** Whether a file of this project was deleted. */
  async deleteFile(id: string, projectId: string): Promise<boolean> {
    return (await this.found(this.json('DELETE', `/internal/v1/files/${encodeURIComponent(id)}?${project(projectId)}`))) !== null;
  }

  /** A file's content as the control plane streams it (JSON lines), or null when there is no such file. */
  fileContent(id: string, projectId: string): Promise<Readable | null> {
    return this.stream(`/internal/v1/files/${encodeURIComponent(id)}/content?${project(projectId)}`);
  }

  /** Every line of a batch with its result (StoredLineResult JSON lines), or null when there is no such batch. */
  batchResults(id: string, projectId: string): Promise<Readable | null> {
    return this.stream(`/internal/v1/batches/${encodeURIComponent(id)}/results?${project(projectId)}`);
  }

  createBatch(batch: Omit<BatchCreate, 'v'>): Promise<BatchRow> {
    return this.json<BatchRow>('POST', '/internal/v1/batches', { v: 1, ...batch }, 201);
  }

  getBatch(id: string, projectId: string): Promise<BatchRow | null> {
    return this.found(this.json<BatchRow>('GET', `/internal/v1/batches/${encodeURIComponent(id)}?${project(projectId)}`));
  }

  listBatches(projectId: string, query: URLSearchParams): Promise<Page<BatchRow>> {
    query.set('project_id', projectId);
    return this.json<Page<BatchRow>>('GET', `/internal/v1/batches?${query}`);
  }

  /** The batch as it was, once deleted; null when there is no such batch. Refused while it runs. */
  deleteBatch(id: string, projectId: string): Promise<BatchRow | null> {
    return this.found(this.json<BatchRow>('DELETE', `/internal/v1/batches/${encodeURIComponent(id)}?${project(projectId)}`));
  }

  cancelBatch(id: string, projectId: string): Promise<BatchRow | null> {
    return this.found(this.json<BatchRow>('POST', `/internal/v1/batches/${encodeURIComponent(id)}/cancel?${project(projectId)}`));
  }

  /** The batch as its runner needs it, or null once it is gone (its project deleted). */
  run(id: string): Promise<BatchRun | null> {
    return this.found(this.json<BatchRun>('GET', `/internal/v1/batches/${encodeURIComponent(id)}/run`));
  }

  async claim(id: string, claim: Omit<BatchClaim, 'v'>): Promise<ClaimedLine[]> {
    return (await this.json<{ lines: ClaimedLine[] }>('POST', `/internal/v1/batches/${encodeURIComponent(id)}/claim`, { v: 1, ...claim })).lines;
  }

  results(id: string, results: LineResult[]): Promise<BatchResultsAck> {
    return this.json<BatchResultsAck>('POST', `/internal/v1/batches/${encodeURIComponent(id)}/results`, { v: 1, results } satisfies BatchResults);
  }

  finish(id: string, finish: Omit<BatchFinish, 'v'>): Promise<BatchRow> {
    return this.json<BatchRow>('POST', `/internal/v1/batches/${encodeURIComponent(id)}/finish`, { v: 1, ...finish });
  }

  /** The provider's batch `upstream_id` holds these lines: they are claimed no more. */
  addSubmission(id: string, submission: Omit<SubmissionCreate, 'v'>): Promise<BatchSubmission> {
    return this.json<BatchSubmission>('POST', `/internal/v1/batches/${encodeURIComponent(id)}/submissions`, { v: 1, ...submission } satisfies SubmissionCreate, 201);
  }

  async submissions(id: string): Promise<BatchSubmission[]> {
    return (await this.json<{ data: BatchSubmission[] }>('GET', `/internal/v1/batches/${encodeURIComponent(id)}/submissions`)).data;
  }

  async endSubmission(id: string, submissionId: string, status: SubmissionEnd['status']): Promise<void> {
    await this.json('POST', `/internal/v1/batches/${encodeURIComponent(id)}/submissions/${encodeURIComponent(submissionId)}/end`, { v: 1, status } satisfies SubmissionEnd, 204);
  }

  /** The input of lines not answered yet: those named, or a page of a submission's. */
  async lines(id: string, which: { line_nos: number[] } | { submission_id: string; after: number; limit: number }): Promise<ClaimedLine[]> {
    return (await this.json<{ lines: ClaimedLine[] }>('POST', `/internal/v1/batches/${encodeURIComponent(id)}/lines`, { v: 1, ...which } satisfies LinesRead)).lines;
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  private async json<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown, expect = 200): Promise<T> {
    let answer;
    try {
      answer = await this.pool.request({
        method,
        path,
        headers: body === undefined ? { authorization: this.authorization } : { authorization: this.authorization, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch {
      throw Errors.batchStoreUnavailable('no answer');
    }
    const { statusCode } = answer;
    if (statusCode === expect) {
      if (statusCode === 204) {
        await answer.body.dump();
        return undefined as T;
      }
      return (await answer.body.json()) as T;
    }
    throw await refusal(statusCode, answer.body);
  }

  /** null for a 404 (the caller's "no such"), the value otherwise. */
  private async found<T>(pending: Promise<T>): Promise<T | null> {
    try {
      return await pending;
    } catch (err) {
      if (err instanceof GatewayError && err.status === 404) return null;
      throw err;
    }
  }

  private async stream(path: string): Promise<Readable | null> {
    let answer;
    try {
      answer = await this.pool.request({ method: 'GET', path, headers: { authorization: this.authorization } });
    } catch {
      throw Errors.batchStoreUnavailable('no answer');
    }
    if (answer.statusCode === 200) return answer.body;
    if (answer.statusCode === 404) {
      await answer.body.dump();
      return null;
    }
    throw await refusal(answer.statusCode, answer.body);
  }
}

/** The control plane's own 4xx, as the GatewayError it named; any other answer is a store that is away. */
async function refusal(statusCode: number, body: { json(): Promise<unknown>; dump(): Promise<void> }): Promise<GatewayError> {
  if (statusCode >= 400 && statusCode < 500) {
    const sent = (await body.json().catch(() => null)) as ErrorBody | null;
    const code = sent?.error?.code;
    if (typeof code === 'string' && isErrorCode(code)) return Errors.relayed(code, sent!.error.message, sent!.error.param ?? null);
  } else {
    await body.dump().catch(() => {});
  }
  return Errors.batchStoreUnavailable(`answered ${statusCode}`);
}

function project(projectId: string): string {
  return `project_id=${encodeURIComponent(projectId)}`;
}
