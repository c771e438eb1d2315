/**
 * One fixed one-minute window of one limit (requests or tokens, of a key or a project), as this
 * proxy sees it: the total every replica had counted at the last exchange with Redis, plus what
 * this proxy admitted since (`pending`, not yet sent; `sending`, on its way).
 */
export class RateWindow {
  /** Minute (ms since epoch ÷ 60,000) the counts belong to. */
  minute = -1;
  /** Window total in Redis as of the last exchange, this proxy's earlier counts included. */
  global = 0;
  pending = 0;
  sending = 0;
  /** Admitted or checked since the last sync: its global total is worth refreshing. */
  touched = false;

  constructor(
    /** Redis key of the window without its minute (the minute is appended per window). */
    readonly keyBase: string,
    readonly limit: number,
    /** What the refusal message calls this limit. */
    readonly label: string,
  ) {}

  /** Starts a new window when the minute changed; what the old one held no longer matters. */
  roll(minute: number): void {
    if (minute === this.minute) return;
    this.minute = minute;
    this.global = 0;
    this.pending = 0;
    this.sending = 0;
  }

  /** This proxy's best knowledge of the window's total. */
  get seen(): number {
    return this.global + this.pending + this.sending;
  }

  redisKey(): string {
    return `${this.keyBase}${this.minute}`;
  }

  /** Takes what is pending for an exchange with Redis; `settle` or `restore` follows. */
  take(): number {
    const sent = this.pending;
    this.pending = 0;
    this.sending += sent;
    this.touched = false;
    return sent;
  }

  /**
   * Redis answered with the window's total, which includes `sent` and every earlier send (one
   * connection answers in order); later sends are still in `sending`.
   */
  settle(minute: number, sent: number, total: number): void {
    if (minute !== this.minute) return;
    this.sending -= sent;
    this.global = total;
  }

  restore(minute: number, sent: number): void {
    if (minute !== this.minute) return;
    this.sending -= sent;
    this.pending += sent;
  }
}
