import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WireMock } from '../proxy/src/providers/conformance.case.js';

/**
 * The common part of every provider's wire-faithful mock used by the adapter conformance suite:
 * an HTTP server on a free loopback port that parses the JSON body, records the last request,
 * counts requests the client abandoned, and hands each request to the provider's own `answer`.
 * Scenarios are chosen by the upstream model name (each wire format carries it, in the body or
 * the path): see SCENARIOS in proxy/src/providers/conformance.case.ts.
 */
export interface WireRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
  /** The body's bytes as they came (for mocks that check a signature over them). */
  raw: Buffer;
}

export interface RunningWireMock extends WireMock {
  /** Requests received so far. */
  requests(): number;
  close(): Promise<void>;
}

export type WireAnswer = (req: WireRequest, res: ServerResponse) => void;

export async function startWireMock(answer: WireAnswer): Promise<RunningWireMock> {
  let last: WireRequest | null = null;
  let aborted = 0;
  let requests = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      let body: Record<string, unknown> = {};
      const raw = Buffer.concat(parts);
      try {
        body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
      } catch {
        // A body that is not JSON is recorded as empty; the provider's answer decides.
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : (v ?? '');
      requests++;
      last = { method: req.method ?? 'GET', path: req.url ?? '/', headers, body, raw };
      res.on('close', () => {
        if (!res.writableFinished) aborted++;
      });
      answer(last, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    lastRequest: () => last,
    aborted: () => aborted,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Writes SSE frames one by one, `gapMs` apart; `hang` leaves the response open after them. */
export function sendSse(res: ServerResponse, frames: string[], options: { gapMs?: number; hang?: boolean; headers?: Record<string, string> } = {}): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...options.headers });
  let i = 0;
  const step = () => {
    if (res.destroyed) return;
    if (i >= frames.length) {
      if (!options.hang) res.end();
      return;
    }
    res.write(frames[i++]);
    setTimeout(step, options.gapMs ?? 2);
  };
  step();
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}
