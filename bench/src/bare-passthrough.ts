import { STATUS_CODES } from 'node:http';
import { Pool, type Dispatcher } from 'undici';
import { loadUws, type HttpResponse, type us_listen_socket } from '@gateway/proxy/uws';

/**
 * The practical ceiling for the gateway: the same HTTP server library and the same upstream
 * client, doing only what any proxy must (read the body, forward it over a keep-alive pool, send
 * the answer back, streams with backpressure) and none of what the product adds (auth, routing,
 * validation, records, metrics). The gap between this and the gateway is the price of features.
 */
export interface BarePassthroughOptions {
  /** Upstream origin; the request path is forwarded as it came. */
  upstream: string;
  port?: number;
  host?: string;
  /** Upstream connections; unbounded by default so 10k held streams each get one. */
  connections?: number | null;
}

export interface BarePassthrough {
  port: number;
  close(): Promise<void>;
}

const MCP_HEADERS = ['accept', 'mcp-session-id', 'mcp-protocol-version'] as const;

export function startBarePassthrough(options: BarePassthroughOptions): Promise<BarePassthrough> {
  const uws = loadUws();
  const pool = new Pool(new URL(options.upstream).origin, {
    connections: options.connections ?? null,
    keepAliveTimeout: 30_000,
    headersTimeout: 300_000,
    bodyTimeout: 300_000,
  });
  const app = uws.App();

  app.post('/*', (res, req) => {
    const query = req.getQuery();
    const path = query ? `${req.getUrl()}?${query}` : req.getUrl();
    const headers: Record<string, string> = { 'content-type': req.getHeader('content-type') || 'application/json' };
    // What an MCP exchange needs passed (the mcp scenario); absent on model requests.
    for (const name of MCP_HEADERS) {
      const value = req.getHeader(name);
      if (value !== '') headers[name] = value;
    }
    const controller = new AbortController();
    const state = { aborted: false };
    res.onAborted(() => {
      state.aborted = true;
      controller.abort();
    });
    const parts: Buffer[] = [];
    res.onData((chunk, isLast) => {
      // uWebSockets.js reuses the chunk's memory once this callback returns.
      parts.push(Buffer.from(new Uint8Array(chunk).slice()));
      if (!isLast) return;
      const body = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
      pool.request({ path, method: 'POST', headers, body, signal: controller.signal }).then(
        (upstream) => relay(res, upstream, state),
        () => fail(res, state),
      );
    });
  });

  return new Promise((resolve, reject) => {
    app.listen(options.host ?? '127.0.0.1', options.port ?? 0, (socket: us_listen_socket | false) => {
      if (!socket) return reject(new Error(`the bare pass-through could not listen on port ${options.port ?? 0}`));
      resolve({
        port: uws.us_socket_local_port(socket),
        close: async () => {
          uws.us_listen_socket_close(socket);
          // Held streams would keep close() waiting for ever; a stopping ceiling owes nobody an answer.
          await pool.destroy();
        },
      });
    });
  });
}

function statusLine(code: number): string {
  return `${code} ${STATUS_CODES[code] ?? 'Unknown'}`;
}

function fail(res: HttpResponse, state: { aborted: boolean }): void {
  if (state.aborted) return;
  state.aborted = true;
  res.cork(() => res.writeStatus('502 Bad Gateway').end());
}

/** Event streams are relayed chunk by chunk; anything else is sent whole in one corked write. */
function relay(res: HttpResponse, upstream: Dispatcher.ResponseData, state: { aborted: boolean }): void {
  const header = upstream.headers['content-type'];
  const contentType = Array.isArray(header) ? header[0] : header;
  const body = upstream.body;
  body.on('error', () => {
    if (state.aborted) return;
    state.aborted = true;
    res.close();
  });
  if (state.aborted) {
    body.destroy();
    return;
  }
  if (contentType?.startsWith('text/event-stream')) {
    res.cork(() => {
      res.writeStatus(statusLine(upstream.statusCode)).writeHeader('content-type', contentType).writeHeader('cache-control', 'no-cache');
    });
    body.on('data', (chunk: Buffer) => {
      if (state.aborted) return;
      let ok = true;
      res.cork(() => {
        ok = res.write(chunk);
      });
      if (!ok) {
        body.pause();
        res.onWritable(() => {
          body.resume();
          return true;
        });
      }
    });
    body.on('end', () => {
      if (!state.aborted) res.cork(() => res.end());
    });
    return;
  }
  const parts: Buffer[] = [];
  body.on('data', (chunk: Buffer) => parts.push(chunk));
  body.on('end', () => {
    if (state.aborted) return;
    const payload = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
    res.cork(() => {
      res.writeStatus(statusLine(upstream.statusCode));
      if (contentType !== undefined) res.writeHeader('content-type', contentType);
      res.end(payload);
    });
  });
}
