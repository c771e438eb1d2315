import type { Dispatcher } from 'undici';
import type { Cancel } from './cancel.js';

/**
 * One POST to a provider over an undici pool, through `dispatch()` with a handler of our own: the
 * answer's body arrives as the Buffers undici reads, collected into one Buffer or handed over one
 * by one, with no Readable stream, no AbortSignal and no promise per chunk in between (undici's
 * `request()` builds all three for every call). Backpressure is undici's: a handler that answers
 * `false` pauses the socket until `resume()`.
 */
export class UpstreamAborted extends Error {
  constructor() {
    super('The provider call was cancelled.');
    this.name = 'UpstreamAborted';
  }
}

/** Bytes held for a slow consumer before the provider's socket is paused. */
const HIGH_WATER = 64 * 1024;

export class UpstreamResponse implements Dispatcher.DispatchHandler {
  status = 0;
  private rawHeaders: Buffer[] | null = null;
  private chunks: Buffer[] = [];
  private buffered = 0;
  private done = false;
  private failure: Error | null = null;
  private resumeFn: (() => void) | null = null;
  private paused = false;
  /** The whole body is wanted at once: never pause the socket. */
  private collecting = false;
  /** The rest of the body is not wanted: read and dropped, so the connection returns to the pool. */
  private discarding = false;
  private wake: (() => void) | null = null;
  private started: { resolve: (res: UpstreamResponse) => void; reject: (err: Error) => void } | null = null;
  /** undici's abort of this exchange alone (the request's Cancel may go on to another provider). */
  private abortFn: ((err: Error) => void) | null = null;

  constructor(
    private readonly cancel: Cancel,
    private readonly settled: (() => void) | undefined,
  ) {}

  /**
   * Sends the request; resolves once the provider's status and headers are in. `settled` runs
   * once when the exchange is over (body read to its end, failed or aborted): until then it holds
   * one of the pool's connections.
   */
  static post(pool: Pick<Dispatcher, 'dispatch'>, path: string, headers: Record<string, string>, body: Buffer, cancel: Cancel, settled?: () => void): Promise<UpstreamResponse> {
    return UpstreamResponse.send(pool, 'POST', path, headers, body, cancel, settled);
  }

  /** As `post`, for any method; `body` null sends none (a GET or DELETE). */
  static send(pool: Pick<Dispatcher, 'dispatch'>, method: Dispatcher.HttpMethod, path: string, headers: Record<string, string>, body: Buffer | null, cancel: Cancel, settled?: () => void): Promise<UpstreamResponse> {
    if (cancel.aborted) {
      settled?.();
      return Promise.reject(new UpstreamAborted());
    }
    const res = new UpstreamResponse(cancel, settled);
    return new Promise((resolve, reject) => {
      res.started = { resolve, reject };
      pool.dispatch({ path, method, headers, body }, res);
    });
  }

  /** A response header (lower-case name), read from the raw list only when asked. */
  header(name: string): string | undefined {
    const raw = this.rawHeaders;
    if (raw === null) return undefined;
    for (let i = 0; i + 1 < raw.length; i += 2) {
      if (raw[i]!.toString('latin1').toLowerCase() === name) return raw[i + 1]!.toString('latin1');
    }
    return undefined;
  }

  /** The whole body as one Buffer. */
  async body(limit = Number.POSITIVE_INFINITY): Promise<Buffer> {
    this.collecting = true;
    if (this.paused) {
      this.paused = false;
      this.resumeFn?.();
    }
    while (!this.done && this.failure === null && this.buffered <= limit) await this.next();
    if (this.failure !== null && this.buffered <= limit) throw this.failure;
    const whole = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    this.chunks = [];
    return whole.length > limit ? whole.subarray(0, limit) : whole;
  }

  /** The body chunk by chunk, as it arrives; the provider waits while the consumer does. */
  async *stream(): AsyncGenerator<Buffer> {
    for (;;) {
      if (this.chunks.length > 0) {
        const pending = this.chunks;
        this.chunks = [];
        this.buffered = 0;
        if (this.paused) {
          this.paused = false;
          this.resumeFn?.();
        }
        for (const chunk of pending) yield chunk;
        continue;
      }
      if (this.failure !== null) throw this.failure;
      if (this.done) return;
      await this.next();
    }
  }

  /**
   * The answer is complete before its body ends (an SSE stream's end marker came): what follows is
   * read and dropped in the background, so the caller need not wait for it and the keep-alive
   * connection still returns to the pool.
   */
  release(): void {
    this.discarding = true;
    this.chunks = [];
    this.buffered = 0;
    if (this.paused) {
      this.paused = false;
      this.resumeFn?.();
    }
  }

  /**
   * Stops reading: this exchange's connection is given up (an error page too long to read, a stream
   * the gateway no longer needs). The request's Cancel is left alone: the router may still try the
   * route's next provider.
   */
  destroy(): void {
    if (this.done || this.failure !== null) return;
    this.abortFn?.(new UpstreamAborted());
  }

  private next(): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
    });
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  // undici's handler interface.

  onConnect(abort: (err?: Error) => void): void {
    this.abortFn = abort;
    this.cancel.onAbort(() => abort(new UpstreamAborted()));
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    if (statusCode < 200) return true;
    this.status = statusCode;
    this.rawHeaders = rawHeaders;
    this.resumeFn = resume;
    const started = this.started;
    this.started = null;
    started?.resolve(this);
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.discarding) return true;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    this.notify();
    if (this.collecting || this.buffered < HIGH_WATER) return true;
    this.paused = true;
    return false;
  }

  onComplete(): void {
    this.done = true;
    this.cancel.clear();
    this.settled?.();
    this.notify();
  }

  onError(err: Error): void {
    this.cancel.clear();
    this.settled?.();
    const failure = this.cancel.aborted || err instanceof UpstreamAborted ? new UpstreamAborted() : err;
    const started = this.started;
    this.started = null;
    if (started !== null) {
      started.reject(failure);
      return;
    }
    this.failure = failure;
    this.notify();
  }
}
