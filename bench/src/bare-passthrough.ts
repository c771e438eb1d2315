import { STATUS_CODES } from 'node:http';
import { Pool, type Dispatcher } from 'undici';
import { performance } from 'node:perf_hooks';
import { ClientStack } from '@gateway/proxy/client-stack';
import type { StepClock, StepTimes } from '@gateway/proxy/step-clock';
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
  /** The gateway's step clock (STEP_TIMES_FILE), marking the moments any proxy has: for the breakdown side by side. */
  stepTimes?: StepTimes | null;
}

export interface BarePassthrough {
  port: number;
  close(): Promise<void>;
}

const MCP_HEADERS = ['accept', 'mcp-session-id', 'mcp-protocol-version'] as const;

export function startBarePassthrough(options: BarePassthroughOptions): Promise<BarePassthrough> {
  const uws = loadUws();
  // The gateway's own provider leg: with no connection cap, its stack of idle connections.
  const clientOptions = { keepAliveTimeout: 30_000, headersTimeout: 300_000, bodyTimeout: 300_000 };
  const origin = new URL(options.upstream).origin;
  const pool = options.connections == null ? new ClientStack(origin, clientOptions) : new Pool(origin, { ...clientOptions, connections: options.connections });
  const app = uws.App();

  const stepTimes = options.stepTimes ?? null;
  app.post('/*', (res, req) => {
    const clock = stepTimes?.clock(performance.now()) ?? null;
    const query = req.getQuery();
    const path = query ? `${req.getUrl()}?${query}` : req.getUrl();
    const headers: Record<string, string> = { 'content-type': req.getHeader('content-type') || 'application/json' };
    // What an MCP exchange needs passed (the mcp scenario); absent on model requests.
    for (const name of MCP_HEADERS) {
      const value = req.getHeader(name);
      if (value !== '') headers[name] = value;
    }
    const relay = new Relay(res, clock, stepTimes);
    res.onAborted(() => relay.clientGone());
    const parts: Buffer[] = [];
    res.onData((chunk, isLast) => {
      // uWebSockets.js reuses the chunk's memory once this callback returns: one copy, as the gateway makes.
      parts.push(Buffer.from(new Uint8Array(chunk)));
      if (!isLast) return;
      const body = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
      clock?.mark('body');
      pool.dispatch({ path, method: 'POST', headers, body }, relay);
      clock?.mark('provider.sent');
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

/**
 * The answer relayed through undici's `dispatch()` with a handler of its own, as the gateway's
 * provider leg does (no Readable stream, no AbortSignal, no promise per request): event streams
 * chunk by chunk with backpressure, anything else whole in one corked write.
 */
class Relay implements Dispatcher.DispatchHandler {
  private aborted = false;
  private abort: ((err?: Error) => void) | null = null;
  private status = 0;
  private contentType: string | undefined;
  private streaming = false;
  private parts: Buffer[] = [];

  constructor(
    private readonly res: HttpResponse,
    private readonly clock: StepClock | null = null,
    private readonly stepTimes: StepTimes | null = null,
  ) {}

  clientGone(): void {
    this.aborted = true;
    this.abort?.(new Error('client gone'));
  }

  onConnect(abort: (err?: Error) => void): void {
    if (this.aborted) abort(new Error('client gone'));
    else this.abort = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    if (statusCode < 200) return true;
    this.clock?.mark('provider.headers');
    this.status = statusCode;
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
      const name = rawHeaders[i] as Buffer;
      if (name.length === 12 && name.toString('latin1').toLowerCase() === 'content-type') this.contentType = (rawHeaders[i + 1] as Buffer).toString('latin1');
    }
    this.streaming = this.contentType?.startsWith('text/event-stream') === true;
    if (this.streaming && !this.aborted) {
      const { res, contentType } = this;
      res.cork(() => {
        res.writeStatus(statusLine(statusCode)).writeHeader('content-type', contentType as string).writeHeader('cache-control', 'no-cache');
      });
      res.onWritable(() => {
        resume();
        return true;
      });
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.aborted) return true;
    if (!this.streaming) {
      this.parts.push(chunk);
      return true;
    }
    let ok = true;
    this.res.cork(() => {
      ok = this.res.write(chunk);
    });
    return ok;
  }

  onComplete(): void {
    if (this.aborted) return;
    this.aborted = true;
    const { res } = this;
    if (this.streaming) {
      res.cork(() => res.end());
      return;
    }
    const payload = this.parts.length === 1 ? (this.parts[0] as Buffer) : Buffer.concat(this.parts);
    const clock = this.clock;
    clock?.mark('provider.answered');
    res.cork(() => {
      res.writeStatus(statusLine(this.status));
      if (this.contentType !== undefined) res.writeHeader('content-type', this.contentType);
      res.end(payload);
    });
    if (clock !== null) {
      clock.mark('answered');
      this.stepTimes?.add(clock);
    }
  }

  onError(): void {
    if (this.aborted) return;
    this.aborted = true;
    const { res } = this;
    if (this.status !== 0) res.close();
    else res.cork(() => res.writeStatus('502 Bad Gateway').end());
  }
}
