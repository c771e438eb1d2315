/**
 * How the gateway stops a provider call (client gone, key revoked, drain). An AbortController per
 * request costs an EventTarget and its listeners on the hot path; this is one flag and one
 * callback: the current attempt's own abort (an undici dispatch's). An AbortSignal is made only
 * for an adapter that asks for one (`signal`).
 */
export class Cancel {
  aborted = false;
  private listener: (() => void) | null = null;
  private controller: AbortController | null = null;

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    const listener = this.listener;
    this.listener = null;
    listener?.();
    this.controller?.abort();
  }

  /** Runs `fn` on abort (at once if already aborted); it replaces the previous attempt's. */
  onAbort(fn: () => void): void {
    if (this.aborted) fn();
    else this.listener = fn;
  }

  /** The attempt is over: nothing left to abort. */
  clear(): void {
    this.listener = null;
  }

  /** For adapters built on AbortSignal APIs (timers, fetch); made on first use. */
  get signal(): AbortSignal {
    if (this.controller === null) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort();
    }
    return this.controller.signal;
  }
}
