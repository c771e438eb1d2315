import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A mock of a provider's batch API, for the `batches` bench scenario and the tests of
 * provider-run batches (proxy/test/provider-batches.test.ts).
 *
 * OpenAI's Files and Batch APIs as OpenAI documents them (platform.openai.com/docs/api-reference/
 * batch), for tests of provider-run batches: `POST /v1/files` (multipart, purpose `batch`), `POST
 * /v1/batches` (the file's lines must all call the batch's `endpoint`, else the batch is `failed`
 * with OpenAI's `errors`), `GET /v1/batches/{id}`, `POST /v1/batches/{id}/cancel` (`cancelling`,
 * then `cancelled` at the next read, with the lines not run in no file), and `GET
 * /v1/files/{id}/content` (the output file's `{id, custom_id, response: {status_code, request_id,
 * body}, error}` lines, the 2xx answers; the error file's, the others). A batch stays
 * `in_progress` until the test releases it; then every line is answered by `answer`. Requests
 * without the provider key are refused 401 as OpenAI does.
 */
export interface MockLine {
  custom_id: string;
  method: string;
  url: string;
  body: Record<string, unknown>;
}

export interface MockBatch {
  id: string;
  endpoint: string;
  input_file_id: string;
  metadata: Record<string, string> | null;
  status: string;
  lines: MockLine[];
  output_file_id: string | null;
  error_file_id: string | null;
  cancelled: boolean;
}

export type LineAnswer = (line: MockLine) => { status: number; body: unknown };

export interface OpenAiBatchMock {
  baseUrl: string;
  batches: MockBatch[];
  /** Answers every line of the batches not ended yet (or of one batch): they end `completed`. */
  release(id?: string): void;
  /** While set, batch creation fails 500 (OpenAI's `server_error`), as an outage would. */
  refuseBatches: boolean;
  close(): Promise<void>;
}

/**
 * `azure`: Azure OpenAI's Batch API instead (learn.microsoft.com, "Azure OpenAI batch"): the same
 * objects under `/openai/files` and `/openai/batches`, every call with `api-version` (this one)
 * and the key in an `api-key` header, operations named without `/v1` (`/chat/completions`).
 */
export async function startOpenAiBatchMock(apiKey: string, answer: LineAnswer, azure?: { apiVersion: string }): Promise<OpenAiBatchMock> {
  const root = azure === undefined ? '/v1' : '/openai';
  const files = new Map<string, { bytes: number; filename: string; purpose: string; text: string }>();
  const batches: MockBatch[] = [];
  let next = 0;
  const id = (prefix: string) => `${prefix}${(++next).toString(36).padStart(8, '0')}`;
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const batchObject = (b: MockBatch) => ({
    id: b.id,
    object: 'batch',
    endpoint: b.endpoint,
    errors: b.status === 'failed' ? { object: 'list', data: [{ code: 'invalid_url', message: 'A line calls another endpoint.', line: 1 }] } : null,
    input_file_id: b.input_file_id,
    completion_window: '24h',
    status: b.status,
    output_file_id: b.output_file_id,
    error_file_id: b.error_file_id,
    created_at: 1,
    request_counts: { total: b.lines.length, completed: 0, failed: 0 },
    metadata: b.metadata,
  });
  const finish = (b: MockBatch) => {
    const out: string[] = [];
    const errors: string[] = [];
    for (const line of b.lines) {
      const { status, body } = answer(line);
      const text = JSON.stringify({ id: id('batch_req_'), custom_id: line.custom_id, response: { status_code: status, request_id: id('req_'), body }, error: null });
      (status >= 200 && status < 300 ? out : errors).push(text);
    }
    const store = (lines: string[]) => {
      if (lines.length === 0) return null;
      const fileId = id('file-');
      const text = lines.join('\n') + '\n';
      files.set(fileId, { bytes: text.length, filename: `${b.id}_output.jsonl`, purpose: 'batch_output', text });
      return fileId;
    };
    b.output_file_id = store(out);
    b.error_file_id = store(errors);
    b.status = 'completed';
  };

  const mock: OpenAiBatchMock = {
    baseUrl: '',
    batches,
    refuseBatches: false,
    release(only?: string) {
      for (const b of batches) if ((only === undefined || b.id === only) && b.status === 'in_progress') finish(b);
    },
    close: () => Promise.resolve(),
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const authorized = azure === undefined ? req.headers.authorization === `Bearer ${apiKey}` : req.headers['api-key'] === apiKey;
    if (!authorized) {
      req.resume();
      return json(res, 401, { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' } });
    }
    const url = new URL(req.url ?? '/', 'http://mock');
    if (azure !== undefined && url.searchParams.get('api-version') !== azure.apiVersion) {
      req.resume();
      return json(res, 404, { error: { code: '404', message: 'Resource not found' } });
    }
    const path = url.pathname.replace(root, '/v1');
    if (req.method === 'POST' && path === '/v1/files') {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => {
        // The platform's own multipart reader (fetch's Response.formData), as a server's framework would.
        void new Response(Buffer.concat(parts), { headers: { 'content-type': req.headers['content-type'] ?? '' } })
          .formData()
          .then(async (form) => {
            const file = form.get('file');
            if (form.get('purpose') !== 'batch' || file === null || typeof file === 'string') return json(res, 400, { error: { message: 'purpose batch and a file are required', type: 'invalid_request_error' } });
            const text = await file.text();
            const fileId = id('file-');
            const bytes = Buffer.byteLength(text);
            files.set(fileId, { bytes, filename: file.name, purpose: 'batch', text });
            json(res, 200, { id: fileId, object: 'file', bytes, created_at: 1, filename: file.name, purpose: 'batch', status: 'processed' });
          })
          .catch(() => json(res, 400, { error: { message: 'the upload is not multipart/form-data', type: 'invalid_request_error' } }));
      });
      return;
    }
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = parts.length === 0 ? {} : (JSON.parse(Buffer.concat(parts).toString('utf8')) as Record<string, unknown>);
      if (req.method === 'POST' && path === '/v1/batches') {
        if (mock.refuseBatches) return json(res, 500, { error: { message: 'The server had an error while processing your request.', type: 'server_error' } });
        const file = files.get(String(body.input_file_id));
        if (file === undefined) return json(res, 404, { error: { message: 'No such File object', type: 'invalid_request_error' } });
        if (body.completion_window !== '24h') return json(res, 400, { error: { message: 'completion_window must be 24h', type: 'invalid_request_error', param: 'completion_window' } });
        const lines = file.text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as MockLine);
        const endpoint = String(body.endpoint);
        const b: MockBatch = {
          id: id('batch_'),
          endpoint,
          input_file_id: String(body.input_file_id),
          metadata: (body.metadata as Record<string, string> | undefined) ?? null,
          status: lines.every((l) => l.url === endpoint && l.method === 'POST') ? 'in_progress' : 'failed',
          lines,
          output_file_id: null,
          error_file_id: null,
          cancelled: false,
        };
        batches.push(b);
        return json(res, 200, { ...batchObject(b), status: b.status === 'failed' ? 'failed' : 'validating' });
      }
      const batchMatch = /^\/v1\/batches\/([^/]+)(\/cancel)?$/.exec(path);
      if (batchMatch !== null) {
        const b = batches.find((x) => x.id === batchMatch[1]);
        if (b === undefined) return json(res, 404, { error: { message: 'No such batch', type: 'invalid_request_error' } });
        if (batchMatch[2] !== undefined && req.method === 'POST') {
          if (b.status !== 'in_progress' && b.status !== 'validating') return json(res, 409, { error: { message: `Cannot cancel a batch with status ${b.status}.`, type: 'invalid_request_error' } });
          b.status = 'cancelling';
          b.cancelled = true;
          return json(res, 200, batchObject(b));
        }
        if (req.method === 'GET') {
          const seen = batchObject(b);
          // Cancelling takes a read to finish, as OpenAI's takes a while.
          if (b.status === 'cancelling') b.status = 'cancelled';
          return json(res, 200, seen);
        }
      }
      const contentMatch = /^\/v1\/files\/([^/]+)\/content$/.exec(path);
      if (contentMatch !== null && req.method === 'GET') {
        const file = files.get(contentMatch[1]!);
        if (file === undefined) return json(res, 404, { error: { message: 'No such File object', type: 'invalid_request_error' } });
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        return res.end(file.text);
      }
      json(res, 404, { error: { message: `Unknown path ${path}`, type: 'invalid_request_error' } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  mock.baseUrl = `http://127.0.0.1:${port}`;
  mock.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return mock;
}
