import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { Agent, request } from 'undici';
import { ContractError, decodeInvalidation, type Invalidation } from '@gateway/shared';

/**
 * The second invalidation channel: the control plane's invalidation log, followed over
 * GET /internal/v1/invalidations as newline-delimited JSON. Independent of Redis: deletions reach
 * the proxy through PostgreSQL and the control plane while Redis is away. The stream is resumed
 * from the last log id seen after any break (with a capped backoff), so nothing is missed; a
 * `stream.reset` (the entries after that id were pruned) makes the proxy drop its key map instead.
 *
 * It is live while frames keep coming: the control plane sends one at least every second, so a
 * stream silent for `staleMs` is treated as lost (and its connection dropped) even if TCP has not
 * noticed yet.
 */
export interface StreamHandlers {
  /** An entry of the log (key.deleted, project.deleted). */
  apply(msg: Invalidation): void;
  /** Entries this proxy did not see were pruned, or one could not be read: forget every key. */
  reset(reason: string): void;
}

export interface InvalidationStreamOptions {
  /** A stream without a frame for this long is lost. */
  staleMs?: number;
  /** Longest wait between reconnection attempts. */
  maxBackoffMs?: number;
}

export class InvalidationStream {
  private lastId: number | null = null;
  private connected = false;
  private lastFrameAt = 0;
  private lostSince = Date.now();
  private closed = false;
  private readonly abort = new AbortController();
  private readonly dispatcher: Agent;
  private readonly staleMs: number;
  private readonly maxBackoffMs: number;
  private loop: Promise<void> | null = null;
  private firstFrame: (() => void) | null = null;
  private lastFailure = '';

  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
    private readonly handlers: StreamHandlers,
    private readonly log: Pick<Logger, 'info' | 'warn'>,
    options: InvalidationStreamOptions = {},
  ) {
    this.staleMs = options.staleMs ?? 2_500;
    this.maxBackoffMs = options.maxBackoffMs ?? 2_000;
    // The body timeout is the silence after which the stream is given up and opened again.
    this.dispatcher = new Agent({ bodyTimeout: this.staleMs, headersTimeout: 5_000, connectTimeout: 3_000 });
  }

  /** Starts following; resolves at the first frame, or after `waitMs` (the proxy then starts on Redis alone). */
  async start(waitMs = 3_000): Promise<void> {
    const first = new Promise<void>((resolve) => {
      this.firstFrame = resolve;
    });
    this.loop = this.run();
    await Promise.race([first, sleep(waitMs, undefined, { ref: false })]);
  }

  /**
   * Null while the stream is live; otherwise since when it has not been (the last frame's time
   * plus the staleness bound, or the moment it broke, whichever is earlier).
   */
  lostAt(now: number): number | null {
    if (this.connected && now - this.lastFrameAt < this.staleMs) return null;
    return this.connected ? this.lastFrameAt + this.staleMs : this.lostSince;
  }

  private async run(): Promise<void> {
    let backoff = 100;
    while (!this.closed) {
      try {
        const after = this.lastId === null ? '' : `?after=${this.lastId}`;
        const res = await request(`${this.baseUrl}/internal/v1/invalidations${after}`, {
          headers: { authorization: `Bearer ${this.token}` },
          signal: this.abort.signal,
          dispatcher: this.dispatcher,
        });
        if (res.statusCode !== 200) {
          await res.body.dump().catch(() => {});
          throw new Error(`the control plane answered ${res.statusCode}`);
        }
        res.body.setEncoding('utf8');
        let pending = '';
        for await (const chunk of res.body as AsyncIterable<string>) {
          pending += chunk;
          let newline: number;
          while ((newline = pending.indexOf('\n')) >= 0) {
            const line = pending.slice(0, newline);
            pending = pending.slice(newline + 1);
            if (line.length > 0) this.frame(line);
          }
          if (this.connected) backoff = 100;
        }
        throw new Error('the control plane ended the stream');
      } catch (err) {
        if (this.closed) break;
        this.broken((err as Error).message);
      }
      await sleep(backoff, undefined, { ref: false }).catch(() => {});
      backoff = Math.min(this.maxBackoffMs, backoff * 2);
    }
  }

  private frame(line: string): void {
    const now = Date.now();
    if (!this.connected) {
      this.connected = true;
      this.lastFailure = '';
      this.log.info({ after: this.lastId }, 'receiving key deletions from the control plane');
    }
    this.lastFrameAt = now;
    this.firstFrame?.();
    this.firstFrame = null;
    let msg: Invalidation;
    try {
      msg = decodeInvalidation(line);
    } catch (err) {
      if (!(err instanceof ContractError)) throw err;
      // An entry we cannot read may have been a deletion: be safe.
      this.handlers.reset(`unreadable log entry: ${err.message}`);
      return;
    }
    switch (msg.kind) {
      case 'stream.alive':
        break;
      case 'stream.reset':
        this.handlers.reset('log entries after the last id seen were pruned');
        // The control plane's head, even if it is below ours (a restored database).
        this.lastId = msg.id;
        return;
      default:
        this.handlers.apply(msg);
    }
    if (msg.id !== null) this.lastId = Math.max(this.lastId ?? 0, msg.id);
  }

  private broken(reason: string): void {
    if (this.connected) {
      this.connected = false;
      this.lostSince = Math.min(Date.now(), this.lastFrameAt + this.staleMs);
      this.log.warn({ reason, last_id: this.lastId }, 'lost the control plane connection that carries key deletions; reconnecting');
    } else if (reason !== this.lastFailure) {
      // Once per distinct reason, not once per attempt: a wrong INTERNAL_TOKEN must be visible.
      this.log.warn({ reason, url: this.baseUrl }, 'cannot reach the control plane for key deletions (CONTROL_PLANE_URL, INTERNAL_TOKEN); retrying');
    }
    this.lastFailure = reason;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.abort.abort();
    await this.loop?.catch(() => {});
    await this.dispatcher.destroy().catch(() => {});
  }
}
