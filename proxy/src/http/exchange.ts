import type { GatewayError } from '@gateway/shared';
import { readBody } from './body-reader.js';
import type { HttpResponse } from './uws.js';
import type { CorsHeaders } from './cors.js';
import { NAME, statusBytes, VALUE, valueBytes } from './wire-bytes.js';

/**
 * One request/response pair on uWebSockets.js, with the rules of that library handled here once:
 * never touch a response after it was aborted, cork every write made outside the request
 * callback, wait for onWritable when a write reports backpressure. Handlers above this file never
 * see uWebSockets.js.
 */
export class Exchange {
  aborted = false;
  /** A status line has been written (a stream started, or a full response sent). */
  headersSent = false;
  /** The response is complete; nothing more may be written. */
  ended = false;
  private onAbortCallback: (() => void) | undefined;
  private writable: (() => void) | undefined;
  private paused = false;
  /** CORS response headers for this request's origin (http/cors.ts); null when CORS_ORIGINS is unset. */
  cors: CorsHeaders | null = null;
  /** Headers a step adds to the answer (the response cache's `x-gateway-cache`, `age`); null when none. */
  extraHeaders: (readonly [string | Buffer, string | Buffer])[] | null = null;

  /**
   * Sets one answer header, replacing the value an earlier call gave `name` (the same Buffer), or
   * removing it (null): a failover's next target says its own.
   */
  setHeader(name: Buffer, value: string | null): void {
    const headers = this.extraHeaders;
    const at = headers === null ? -1 : headers.findIndex(([n]) => n === name);
    if (at !== -1) (headers as (readonly [string | Buffer, string | Buffer])[]).splice(at, 1);
    if (value !== null) (this.extraHeaders ??= []).push([name, value]);
  }

  constructor(
    private readonly res: HttpResponse,
    readonly requestId: string,
  ) {
    res.onAborted(() => {
      this.aborted = true;
      this.ended = true;
      this.writable?.();
      this.onAbortCallback?.();
    });
  }

  /** Collects the body, refused the moment it passes `limit` bytes (body-reader.ts). */
  readBody(limit: number, onBody: (body: Buffer) => void, onTooLarge: () => void): void {
    readBody(this.res, limit, onBody, onTooLarge);
  }

  /**
   * Hands the body over chunk by chunk, each a copy (uWebSockets.js reuses a chunk's memory once
   * the callback returns): a file upload streams on, with pauseBody/resumeBody as its backpressure.
   */
  streamBody(onChunk: (chunk: Buffer, last: boolean) => void): void {
    this.res.onData((chunk, isLast) => onChunk(Buffer.from(new Uint8Array(chunk)), isLast));
  }

  set onAbort(callback: () => void) {
    this.onAbortCallback = callback;
  }

  get open(): boolean {
    return !this.ended;
  }

  send(status: number, contentType: string, body: string | Buffer, retryAfter?: number, closeConnection = false, headOnly = false): void {
    if (this.ended) return;
    this.resumeBody();
    this.ended = true;
    this.headersSent = true;
    this.res.cork(() => {
      this.res.writeStatus(statusBytes(status)).writeHeader(NAME.contentType, valueBytes(contentType)).writeHeader(NAME.requestId, this.requestId);
      if (retryAfter !== undefined) this.res.writeHeader(NAME.retryAfter, String(retryAfter));
      if (this.cors !== null) this.writeHeaders(this.cors);
      if (this.extraHeaders !== null) this.writeHeaders(this.extraHeaders);
      // The answer to a HEAD has the headers a GET would, and no body (a body would be read as the
      // next response). uWebSockets.js cannot reuse a connection after a bodiless answer, so it
      // says `connection: close` and the client opens another.
      if (headOnly) this.res.endWithoutBody(Buffer.byteLength(body), true);
      else this.res.end(body, closeConnection);
    });
  }

  /** Stops reading the request body from the socket until resumeBody() (the key is being checked). */
  pauseBody(): void {
    if (this.ended) return;
    this.paused = true;
    this.res.pause();
  }

  /** Reads the socket again; any answer does this first, or the next request would never be read. */
  resumeBody(): void {
    if (!this.paused || this.ended) return;
    this.paused = false;
    this.res.resume();
  }

  /** The rest of the body is dropped as it arrives (nothing answered yet: call before send). */
  discardBody(): void {
    if (!this.ended) this.res.onData(() => {});
  }

  sendError(err: GatewayError, closeConnection = false): void {
    this.send(err.status, 'application/json', err.toJSON(), err.retryAfter, closeConnection);
  }

  startStream(): void {
    if (this.ended || this.headersSent) return;
    this.headersSent = true;
    this.res.cork(() => {
      this.res
        .writeStatus(statusBytes(200))
        .writeHeader(NAME.contentType, VALUE.eventStream)
        .writeHeader(NAME.cacheControl, VALUE.noCache)
        .writeHeader(NAME.requestId, this.requestId);
      if (this.cors !== null) this.writeHeaders(this.cors);
      if (this.extraHeaders !== null) this.writeHeaders(this.extraHeaders);
    });
  }

  /**
   * A full response with headers of the caller's (an MCP server's session id, its content type);
   * `headers` are name/value pairs already checked by the caller.
   */
  sendWith(status: number, headers: readonly (readonly [string, string])[], body: string | Buffer): void {
    if (this.ended) return;
    this.ended = true;
    this.headersSent = true;
    this.res.cork(() => {
      this.res.writeStatus(statusBytes(status)).writeHeader(NAME.requestId, this.requestId);
      this.writeHeaders(headers);
      if (this.cors !== null) this.writeHeaders(this.cors);
      this.res.end(body);
    });
  }

  /** Starts a streamed response of the caller's status and headers (an MCP server's SSE answer). */
  startStreamWith(status: number, headers: readonly (readonly [string, string])[]): void {
    if (this.ended || this.headersSent) return;
    this.headersSent = true;
    this.res.cork(() => {
      this.res.writeStatus(statusBytes(status)).writeHeader(NAME.requestId, this.requestId);
      this.writeHeaders(headers);
      if (this.cors !== null) this.writeHeaders(this.cors);
    });
  }

  /** Name/value pairs as they are (CORS, a step's extras, an MCP server's): already checked by whoever made them. */
  private writeHeaders(headers: CorsHeaders | readonly (readonly [string | Buffer, string | Buffer])[]): void {
    // Indexed: for…of with destructuring goes through the array iterator on every call.
    for (let i = 0; i < headers.length; i++) {
      const header = headers[i]!;
      this.res.writeHeader(header[0], header[1]);
    }
  }

  /** Writes a chunk; false means the socket is backed up and the caller should await drain(). */
  write(chunk: string | Buffer): boolean {
    if (this.ended) return true;
    let ok = true;
    this.res.cork(() => {
      ok = this.res.write(chunk);
    });
    return ok;
  }

  /** Resolves when the socket can take more (or the client went away). */
  drain(): Promise<void> {
    if (this.ended) return Promise.resolve();
    return new Promise((resolve) => {
      this.writable = resolve;
      this.res.onWritable(() => {
        const done = this.writable;
        this.writable = undefined;
        done?.();
        return true;
      });
    });
  }

  endStream(last?: string): void {
    if (this.ended) return;
    this.resumeBody();
    this.ended = true;
    this.res.cork(() => {
      this.res.end(last);
    });
  }
}
