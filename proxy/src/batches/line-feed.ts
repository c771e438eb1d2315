import type { ClaimedLine } from '@gateway/shared';
import type { BatchStore } from './batch-store.js';

/**
 * A batch's lines not answered yet, in order, claimed from the control plane a page at a time and
 * one page ahead: the next page is asked for while the line workers still have half of this one,
 * so no worker waits on a claim or on the slowest line of a page.
 */
export class LineFeed {
  private buffer: ClaimedLine[] = [];
  private at = 0;
  private after = -1;
  private done = false;
  private claiming: Promise<void> | null = null;

  constructor(
    private readonly store: BatchStore,
    private readonly batchId: string,
    private readonly pageSize: number,
  ) {}

  /** The next line, or null once every line has been handed out. */
  async next(): Promise<ClaimedLine | null> {
    for (;;) {
      if (this.buffer.length - this.at <= this.pageSize / 2) this.claimAhead();
      if (this.at < this.buffer.length) return this.buffer[this.at++]!;
      if (this.done) return null;
      await this.claiming;
    }
  }

  private claimAhead(): void {
    if (this.done || this.claiming !== null) return;
    // Cleared either way: a failed claim rejects the workers awaiting it, and the next call tries again.
    this.claiming = this.claim().finally(() => {
      this.claiming = null;
    });
  }

  private async claim(): Promise<void> {
    const lines = await this.store.claim(this.batchId, { after: this.after, limit: this.pageSize });
    if (lines.length === 0) {
      this.done = true;
      return;
    }
    this.after = lines[lines.length - 1]!.line_no;
    this.buffer = this.buffer.slice(this.at).concat(lines);
    this.at = 0;
  }
}
