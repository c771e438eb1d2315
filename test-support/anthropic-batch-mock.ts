import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Anthropic's Message Batches as Anthropic documents them (docs.anthropic.com, "Message Batches"),
 * for tests of provider-run batches: `POST /v1/messages/batches` (`requests` of `{custom_id,
 * params}`, custom ids of 1–64 letters, digits, `-` and `_`, unique), `GET
 * /v1/messages/batches/{id}` (`processing_status` `in_progress` until the test releases it, then
 * `ended` with its `results_url`), `POST …/cancel` (`canceling`, then `ended` at the next read,
 * every request not run `canceled`), and `GET …/results` (`{custom_id, result}` JSON lines).
 * Requests need the provider key (`x-api-key`) and an `anthropic-version`.
 */
export interface MockRequest {
  custom_id: string;
  params: Record<string, unknown>;
}

export interface MockMessageBatch {
  id: string;
  requests: MockRequest[];
  processing_status: 'in_progress' | 'canceling' | 'ended';
  results: string | null;
  cancelled: boolean;
}

/** A result for a request: a message (`succeeded`) or an error body (`errored`). */
export type RequestAnswer = (request: MockRequest) => { type: 'succeeded'; message: unknown } | { type: 'errored'; error: unknown };

export interface AnthropicBatchMock {
  baseUrl: string;
  batches: MockMessageBatch[];
  release(id?: string): void;
  close(): Promise<void>;
}

const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;

export async function startAnthropicBatchMock(apiKey: string, answer: RequestAnswer): Promise<AnthropicBatchMock> {
  const batches: MockMessageBatch[] = [];
  let next = 0;
  let baseUrl = '';
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const error = (res: ServerResponse, status: number, type: string, message: string) => json(res, status, { type: 'error', error: { type, message } });
  const counts = (b: MockMessageBatch) => {
    const c = { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0 };
    if (b.processing_status !== 'ended') c.processing = b.requests.length;
    else for (const line of (b.results ?? '').split('\n').filter(Boolean)) c[(JSON.parse(line) as { result: { type: keyof typeof c } }).result.type]++;
    return c;
  };
  const object = (b: MockMessageBatch) => ({
    id: b.id,
    type: 'message_batch',
    processing_status: b.processing_status,
    request_counts: counts(b),
    ended_at: b.processing_status === 'ended' ? '2026-12-03T00:00:00Z' : null,
    created_at: '2026-12-03T00:00:00Z',
    expires_at: '2026-12-04T00:00:00Z',
    cancel_initiated_at: b.cancelled ? '2026-12-03T00:00:00Z' : null,
    results_url: b.processing_status === 'ended' ? `${baseUrl}/v1/messages/batches/${b.id}/results` : null,
  });
  const end = (b: MockMessageBatch, cancelled: boolean) => {
    b.results = b.requests.map((r) => JSON.stringify({ custom_id: r.custom_id, result: cancelled ? { type: 'canceled' } : answer(r) })).join('\n') + '\n';
    b.processing_status = 'ended';
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      if (req.headers['x-api-key'] !== apiKey) return error(res, 401, 'authentication_error', 'invalid x-api-key');
      if (typeof req.headers['anthropic-version'] !== 'string') return error(res, 400, 'invalid_request_error', 'anthropic-version: header is required');
      const path = new URL(req.url ?? '/', 'http://mock').pathname;
      if (req.method === 'POST' && path === '/v1/messages/batches') {
        const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { requests?: MockRequest[] };
        const requests = body.requests;
        if (!Array.isArray(requests) || requests.length === 0) return error(res, 400, 'invalid_request_error', 'requests: at least one request is required');
        const ids = new Set<string>();
        for (const [i, r] of requests.entries()) {
          if (typeof r.custom_id !== 'string' || !CUSTOM_ID.test(r.custom_id) || ids.has(r.custom_id)) return error(res, 400, 'invalid_request_error', `requests.${i}.custom_id: invalid or repeated`);
          if (typeof r.params?.model !== 'string' || typeof r.params.max_tokens !== 'number') return error(res, 400, 'invalid_request_error', `requests.${i}.params: model and max_tokens are required`);
          if (r.params.stream === true) return error(res, 400, 'invalid_request_error', `requests.${i}.params.stream: not allowed in a batch`);
          ids.add(r.custom_id);
        }
        const b: MockMessageBatch = { id: `msgbatch_mock${(++next).toString().padStart(6, '0')}`, requests, processing_status: 'in_progress', results: null, cancelled: false };
        batches.push(b);
        return json(res, 200, object(b));
      }
      const match = /^\/v1\/messages\/batches\/([^/]+)(\/cancel|\/results)?$/.exec(path);
      const b = match === null ? undefined : batches.find((x) => x.id === match[1]);
      if (match === null || b === undefined) return error(res, 404, 'not_found_error', 'no such batch');
      if (match[2] === '/cancel' && req.method === 'POST') {
        if (b.processing_status === 'in_progress') {
          b.processing_status = 'canceling';
          b.cancelled = true;
        }
        return json(res, 200, object(b));
      }
      if (match[2] === '/results' && req.method === 'GET') {
        if (b.processing_status !== 'ended' || b.results === null) return error(res, 400, 'invalid_request_error', 'the batch has not ended');
        res.writeHead(200, { 'content-type': 'application/binary' });
        return res.end(b.results);
      }
      if (match[2] === undefined && req.method === 'GET') {
        const seen = object(b);
        if (b.processing_status === 'canceling') end(b, true);
        return json(res, 200, seen);
      }
      error(res, 404, 'not_found_error', 'no such route');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    batches,
    release(only?: string) {
      for (const b of batches) if ((only === undefined || b.id === only) && b.processing_status === 'in_progress') end(b, false);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
