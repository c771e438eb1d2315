import { Exchange } from '../http/exchange.js';
import type { HttpResponse } from '../http/uws.js';
import type { RequestContext } from '../pipeline/context.js';
import type { ProviderBatchResult } from '../providers/provider-batches.js';
import type { Prepaid } from './provider-line-steps.js';

/** A line admitted for a provider-run batch: the provider entry it goes to, and its request there. */
export interface HandedOff {
  provider: string;
  operation: string;
  body: Buffer;
  /** Gives back what the line was charged when handed off: it will never be sent (its batch stopped first). */
  giveBack: () => void;
}

/** A provider batch's result for the line, which the line's chain reads as the provider's answer. */
export interface Collected {
  provider: string;
  result: Extract<ProviderBatchResult, { outcome: 'answered' }>;
}

/**
 * A batch line's request, answered into memory: the line runs through its endpoint's own chain of
 * steps (key, allow-list, caps, guardrails, rate limits, quota, budgets, provider, records), so it
 * has every guarantee a request over HTTP has, and its answer is kept instead of sent. This is
 * the part of uWebSockets.js' response the Exchange uses, over a buffer.
 */
class CapturedResponse {
  status = 0;
  retryAfter: number | null = null;
  private parts: Buffer[] = [];
  private onDataHandler: ((chunk: ArrayBuffer, last: boolean) => void) | null = null;
  private abortHandler: (() => void) | null = null;

  constructor(
    private readonly body: Buffer,
    private readonly ended: () => void,
  ) {}

  onAborted(handler: () => void): this {
    this.abortHandler = handler;
    return this;
  }

  /** Ends the request as a client leaving would (the batch was cancelled while the line ran). */
  abort(): void {
    this.abortHandler?.();
  }

  onData(handler: (chunk: ArrayBuffer, last: boolean) => void): this {
    const first = this.onDataHandler === null;
    this.onDataHandler = handler;
    // The body comes after the step that asked for it has returned, as a socket's would.
    if (first) {
      queueMicrotask(() => {
        const bytes = this.body;
        this.onDataHandler?.(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer, true);
      });
    }
    return this;
  }

  cork(work: () => void): this {
    work();
    return this;
  }

  writeStatus(status: Buffer | string): this {
    this.status = Number.parseInt(String(status), 10);
    return this;
  }

  writeHeader(name: Buffer | string, value: Buffer | string): this {
    if (String(name).toLowerCase() === 'retry-after') this.retryAfter = Number(String(value));
    return this;
  }

  write(chunk: string | Buffer): boolean {
    this.parts.push(typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk));
    return true;
  }

  end(chunk?: string | Buffer): this {
    if (chunk !== undefined) this.write(chunk);
    this.ended();
    return this;
  }

  endWithoutBody(): this {
    this.ended();
    return this;
  }

  onWritable(): this {
    return this;
  }

  pause(): void {}

  resume(): void {}

  text(): string {
    return Buffer.concat(this.parts).toString('utf8');
  }
}

/** The Exchange of a batch line: what it answered, once the answer is complete. */
export class LineExchange extends Exchange {
  private readonly captured: CapturedResponse;
  /** Called by the line's last closing step, once its records are handed over. */
  settled: ((ctx: RequestContext) => void) | null = null;
  /** Set by the hand-off step when the line goes to a provider's own batch API (nothing answered, nothing recorded yet). */
  handedOff: HandedOff | null = null;
  /** The provider's batch answer for a line being collected (the collect chain's provider step reads it). */
  collected: Collected | null = null;
  /** What a line being collected was charged when handed off (provider-line-steps.ts). */
  prepaid: Prepaid | null = null;
  /** Lines in the line's batch, for a provider that takes no batch under a minimum. */
  batchLines = 0;
  /** False when the line is to be run by the gateway even if its provider runs batches (its provider batch would be too small). */
  handOff = true;

  constructor(requestId: string, body: Buffer) {
    const captured = new CapturedResponse(body, () => {});
    super(captured as unknown as HttpResponse, requestId);
    this.captured = captured;
  }

  /** The Retry-After the answer carried, in seconds; null when none. */
  get retryAfterSent(): number | null {
    const value = this.captured.retryAfter;
    return value === null || !Number.isFinite(value) ? null : value;
  }

  answerText(): string {
    return this.captured.text();
  }

  abortLine(): void {
    this.captured.abort();
  }
}
