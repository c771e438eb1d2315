const BASE_MS = 100;
const CAP_MS = 5_000;

/**
 * The wait after `failures` failed sends in a row: doubling from 100 ms, capped at 5 s, spread
 * ±20% so proxies that lost Redis together do not all come back in the same instant.
 * `random` is in [0, 1).
 */
export function retryDelayMs(failures: number, random: number = Math.random()): number {
  const delay = Math.min(CAP_MS, BASE_MS * 2 ** Math.min(Math.max(failures, 1) - 1, 16));
  return Math.round(delay * (0.8 + random * 0.4));
}

/**
 * When the next send may go after failed ones. While it may not, waiting() arranges one call of
 * `retry` for the moment it may.
 */
export class RetryBackoff {
  private failures = 0;
  private retryAt = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly retry: () => void,
    private readonly random: () => number = Math.random,
  ) {}

  /** Failed sends since the last one that went through. */
  get failuresInARow(): number {
    return this.failures;
  }

  failed(now: number = Date.now()): void {
    this.failures++;
    this.retryAt = now + retryDelayMs(this.failures, this.random());
  }

  /**
   * A send went through; returns the failures it ends. The wait stays: a send that went out
   * before a later one failed says nothing about Redis now.
   */
  succeeded(): number {
    const failures = this.failures;
    this.failures = 0;
    return failures;
  }

  /** Sends may go now (Redis said it is back, or a flush should not wait out the backoff). */
  skipWait(): void {
    this.retryAt = 0;
  }

  waiting(now: number = Date.now()): boolean {
    if (now >= this.retryAt) return false;
    if (this.timer === null) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.retry();
      }, this.retryAt - now);
    }
    return true;
  }

  stop(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}
