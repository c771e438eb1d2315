/**
 * How large a block a proxy leases from a shared limit (a quota's tokens, a budget's dollars):
 * about a second of what this proxy itself reserved lately, at least 1 % of the limit (a slow but
 * steady user spends it in at most ~100 round trips), at most a sixteenth of it and at most `cap`.
 * A proxy (or worker) that sees one request now and then leases little more than that request, so
 * a small limit is not locked up in the unspent blocks of many quiet workers while a busy one is
 * refused. Shared by quota-leases.ts and budget-leases.ts.
 */
export class LeaseRate {
  /** Reserved since `windowStart`. */
  private windowAmount = 0;
  private windowStart: number;
  /** Per second, over the window before. */
  private lastRate = 0;

  constructor(now: number) {
    this.windowStart = now;
  }

  add(amount: number): void {
    this.windowAmount += amount;
  }

  block(limit: number, cap: number, now: number): number {
    const elapsed = now - this.windowStart;
    if (elapsed >= RATE_WINDOW_MS) {
      this.lastRate = (this.windowAmount * 1000) / elapsed;
      this.windowAmount = 0;
      this.windowStart = now;
    }
    const share = Math.ceil(Math.max(this.lastRate, this.windowAmount));
    const floor = Math.floor(limit / 100);
    return Math.max(1, Math.min(cap, Math.floor(limit / 16), Math.max(share, floor)));
  }
}

/** The window over which a proxy's own rate of use is measured. */
const RATE_WINDOW_MS = 1_000;
