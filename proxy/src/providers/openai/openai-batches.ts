import { FormData } from 'undici';
import type { ChatRequest } from '../adapter.js';
import { BatchApi, type BatchAnswers, type BatchLine, type ProviderBatchResult } from '../provider-batches.js';

/**
 * OpenAI's Batch API (`batch: native` on an openai or azure entry): the lines go up as a JSONL file
 * (`POST {base_url}/files`, purpose `batch`), one batch is made of it (`POST {base_url}/batches`,
 * 24 hours), polled (`GET {base_url}/batches/{id}`), and its output and error files are read
 * back line by line. A line is `{custom_id, method, url, body}` with the body the adapter would
 * have sent to `url` (chat completions, or the Responses API for `responses: native`).
 */
export interface OpenAiBatchLines extends BatchAnswers {
  /** The operation (`/v1/chat/completions`, `/v1/responses`) and body of a request, as `complete` would send it. */
  batchLine(request: ChatRequest): { operation: string; body: Buffer };
}

/** Where a server of OpenAI's Batch API keeps files and batches, and how it names operations. */
export interface OpenAiBatchPaths {
  /** Path of the files collection (`/v1/files`, Azure's `/openai/files`). */
  files: string;
  /** Path of the batches collection. */
  batches: string;
  /** Query every call carries (Azure's `?api-version=…`), or ''. */
  query: string;
  /** The operation as a line's `url` and the batch's `endpoint` name it (`/v1/chat/completions`, Azure's `/chat/completions`). */
  operation(operation: string): string;
}

/** OpenAI's own: everything under the base URL's path, operations named as OpenAI names them. */
export function openAiBatchPaths(baseUrl: string): OpenAiBatchPaths {
  const base = new URL(baseUrl).pathname.replace(/\/+$/, '');
  return { files: `${base}/files`, batches: `${base}/batches`, query: '', operation: (operation) => operation };
}

interface OpenAiBatchObject {
  id: string;
  status: string;
  output_file_id?: string | null;
  error_file_id?: string | null;
}

interface OpenAiResultLine {
  custom_id?: unknown;
  response?: { status_code?: unknown; body?: unknown } | null;
  error?: { code?: unknown; message?: unknown } | null;
}

const ENDED = new Set(['completed', 'failed', 'expired', 'cancelled']);

export class OpenAiBatches extends BatchApi {
  constructor(
    provider: string,
    baseUrl: string,
    headers: Record<string, string>,
    private readonly adapter: OpenAiBatchLines,
    private readonly paths: OpenAiBatchPaths = openAiBatchPaths(baseUrl),
  ) {
    super(provider, new URL(baseUrl).origin, headers, adapter);
  }

  line(request: ChatRequest): { operation: string; body: Buffer } {
    return this.adapter.batchLine(request);
  }

  async submit(operation: string, lines: readonly BatchLine[], tag: string): Promise<string> {
    const url = JSON.stringify(this.paths.operation(operation));
    const parts: Buffer[] = [];
    // The body goes in as the bytes the adapter made, never parsed again.
    for (const line of lines) parts.push(Buffer.from(`{"custom_id":${JSON.stringify(line.customId)},"method":"POST","url":${url},"body":`), line.body, Buffer.from('}\n'));
    const form = new FormData();
    form.set('purpose', 'batch');
    form.set('file', new Blob([Buffer.concat(parts)], { type: 'application/jsonl' }), `${tag}.jsonl`);
    const file = await this.client.form<{ id: string }>('take the batch file', `${this.paths.files}${this.paths.query}`, form);
    const batch = await this.client.json<OpenAiBatchObject>('make the batch', 'POST', `${this.paths.batches}${this.paths.query}`, {
      input_file_id: file.id,
      endpoint: this.paths.operation(operation),
      completion_window: '24h',
      metadata: { gateway_batch: tag },
    });
    return batch.id;
  }

  async ended(id: string): Promise<boolean> {
    return ENDED.has((await this.get(id)).status);
  }

  async *results(id: string): AsyncIterable<ProviderBatchResult> {
    const batch = await this.get(id);
    for (const file of [batch.output_file_id, batch.error_file_id]) {
      if (typeof file !== 'string' || file === '') continue;
      for await (const text of this.client.lines('send the batch results', `${this.paths.files}/${encodeURIComponent(file)}/content${this.paths.query}`)) {
        const result = readResult(text);
        if (result !== null) yield result;
      }
    }
  }

  protected async cancelRunning(id: string): Promise<void> {
    await this.client.json('cancel the batch', 'POST', `${this.paths.batches}/${encodeURIComponent(id)}/cancel${this.paths.query}`);
  }

  private get(id: string): Promise<OpenAiBatchObject> {
    return this.client.json<OpenAiBatchObject>('say how the batch goes', 'GET', `${this.paths.batches}/${encodeURIComponent(id)}${this.paths.query}`);
  }
}

/** One line of an output or error file; a line the gateway cannot read is skipped (its line ends with no result). */
function readResult(text: string): ProviderBatchResult | null {
  let line: OpenAiResultLine;
  try {
    line = JSON.parse(text) as OpenAiResultLine;
  } catch {
    return null;
  }
  const customId = line.custom_id;
  if (typeof customId !== 'string') return null;
  const response = line.response;
  if (response !== null && response !== undefined && typeof response.status_code === 'number') {
    return { customId, outcome: 'answered', status: response.status_code, body: Buffer.from(JSON.stringify(response.body ?? null)) };
  }
  const code = line.error?.code;
  if (code === 'batch_expired') return { customId, outcome: 'expired' };
  if (code === 'batch_cancelled') return { customId, outcome: 'canceled' };
  // An error without an answer (the provider could not run the line): the gateway's answer is a provider failure.
  return { customId, outcome: 'answered', status: 502, body: Buffer.from(JSON.stringify({ error: line.error ?? null })) };
}
