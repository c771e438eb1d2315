import { Pool } from 'undici';
import { ClientStack } from './client-stack.js';
import { Errors, type GatewayError, type ProviderConfig } from '@gateway/shared';
import type { Cancel } from './cancel.js';
import { withTraceHeaders } from './trace-headers.js';
import { readLimited, transportError } from './upstream-error.js';
import { UpstreamResponse } from './upstream-request.js';

/**
 * The way every networked adapter reaches its provider: a keep-alive undici Pool with the
 * providers file's connect, header and idle timeouts and the provider's fixed headers (its key
 * among them). By default the pool opens a connection for every request in flight that finds none
 * idle: a stream holds its connection for its whole life, so any cap would make a stream wait for
 * another one to end. When the providers file sets `max_connections`, requests beyond it wait for a
 * connection, and beyond `max_queued` more (when set) they are refused at once with a retryable
 * 503, so a client (or the route's next provider) can go elsewhere. An answer other than 200
 * becomes the adapter's own error, from at most the first 8 KiB of its body.
 */
export type StatusError = (status: number, bodyText: string, res: UpstreamResponse) => GatewayError;

export class ProviderConnection {
  private readonly pool: Pool | ClientStack;
  private readonly maxQueued: number;
  private readonly maxConnections: number;
  /** Exchanges are counted only when a connection cap makes requests wait. */
  private readonly counted: (() => void) | undefined;
  /** Exchanges under way (each holds a connection until its body ends). */
  private outstanding = 0;
  private readonly settled = () => {
    this.outstanding--;
  };

  constructor(
    private readonly config: ProviderConfig,
    origin: string,
    private readonly headers: Record<string, string>,
  ) {
    const options = {
      connect: { timeout: config.connect_timeout_ms },
      headersTimeout: config.timeout_ms,
      bodyTimeout: config.idle_timeout_ms,
      keepAliveTimeout: 30_000,
    };
    this.pool = config.max_connections === null ? new ClientStack(origin, options) : new Pool(origin, { ...options, connections: config.max_connections });
    this.maxConnections = config.max_connections ?? Number.POSITIVE_INFINITY;
    this.maxQueued = config.max_connections === null ? Number.POSITIVE_INFINITY : (config.max_queued ?? Number.POSITIVE_INFINITY);
    this.counted = config.max_connections === null ? undefined : this.settled;
  }

  /** Requests waiting for a connection (always 0 without a connection cap). */
  queueDepth(): number {
    return this.counted === undefined ? 0 : Math.max(0, this.outstanding - this.maxConnections);
  }

  /**
   * POSTs `payload`; resolves with a 200 answer whose body is still to be read. `headers` replaces
   * the fixed ones for an adapter whose credential changes (a refreshed token).
   */
  async post(path: string, payload: Buffer, cancel: Cancel, traced: { traceHeaders?: Record<string, string> } | null, statusError: StatusError, headers: Record<string, string> = this.headers): Promise<UpstreamResponse> {
    if (this.outstanding - this.maxConnections >= this.maxQueued) {
      throw Errors.providerQueueFull(this.config.name);
    }
    let res: UpstreamResponse;
    if (this.counted !== undefined) this.outstanding++;
    try {
      res = await UpstreamResponse.post(this.pool, path, withTraceHeaders(headers, traced), payload, cancel, this.counted);
    } catch (err) {
      throw transportError(this.config.name, err, cancel.aborted);
    }
    if (res.status !== 200) {
      const text = await readLimited(res);
      throw statusError(res.status, text, res);
    }
    return res;
  }

  /**
   * A bodiless request (a GET or DELETE of something the provider keeps) whose answer, whatever its
   * status, the caller passes on as it came: the provider's own 404 is the client's.
   */
  async forward(method: 'GET' | 'DELETE', path: string, cancel: Cancel, headers: Record<string, string> = this.headers): Promise<UpstreamResponse> {
    if (this.outstanding - this.maxConnections >= this.maxQueued) {
      throw Errors.providerQueueFull(this.config.name);
    }
    if (this.counted !== undefined) this.outstanding++;
    try {
      return await UpstreamResponse.send(this.pool, method, path, headers, null, cancel, this.counted);
    } catch (err) {
      throw transportError(this.config.name, err, cancel.aborted);
    }
  }

  /**
   * At drain, after every request was answered or cut: what is still open is only the dropped
   * tails of bodies whose answer was complete, so the connections are closed rather than waited for.
   */
  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
