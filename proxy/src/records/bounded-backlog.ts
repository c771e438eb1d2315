const DROP_LOG_EVERY_MS = 10_000;

/** Where the bound takes records from. */
export interface BacklogSources {
  /** Lets the oldest sent, unconfirmed batch go; its record count, or undefined when none. */
  releaseOldestSent(): number | undefined;
  /** Drops up to `max` of the oldest unsent records; how many (0: nothing more can go). */
  dropOldestUnsent(max: number): number;
}

export interface Trimmed {
  /** Sent records let go before a writer confirmed them. */
  released: number;
  /** Unsent records lost. */
  dropped: number;
  /** Drops to log now (accumulated since the last log line), or 0 to stay quiet. */
  dropsToLog: number;
}

/**
 * The bound on records held in memory (sent and unsent alike), and the accounting of what it
 * costs. Unconfirmed batches go first: they are in Redis, most likely safe already. Only then are
 * unsent records dropped, oldest first. Drops are logged at most every 10 s, since while Redis is
 * away they happen on every request.
 */
export class BoundedBacklog {
  private droppedSinceLog = 0;
  private lastDropLog = 0;

  constructor(
    readonly max: number,
    private readonly now: () => number = Date.now,
  ) {}

  trim(held: number, sources: BacklogSources): Trimmed {
    let excess = held - this.max;
    let released = 0;
    let dropped = 0;
    while (excess > 0) {
      // A whole batch goes at once, even one larger than the excess.
      const sent = sources.releaseOldestSent();
      if (sent !== undefined) {
        released += sent;
        excess -= sent;
        continue;
      }
      const n = sources.dropOldestUnsent(excess);
      // What is left is being sent right now and may already be in Redis; it stays.
      if (n === 0) break;
      dropped += n;
      excess -= n;
    }
    return { released, dropped, dropsToLog: dropped > 0 ? this.noteDropped(dropped) : 0 };
  }

  private noteDropped(n: number): number {
    this.droppedSinceLog += n;
    const now = this.now();
    if (now - this.lastDropLog < DROP_LOG_EVERY_MS) return 0;
    const toLog = this.droppedSinceLog;
    this.droppedSinceLog = 0;
    this.lastDropLog = now;
    return toLog;
  }
}
