/**
 * Delivery attempts in flight on this writer, counted per project, each project allowed at most
 * `perProject` at once. Kept in memory: the share is per writer, and a writer that dies takes its
 * attempts (and their counts) with it.
 */
export class ProjectSlots {
  private readonly inFlight = new Map<string, number>();

  constructor(private readonly perProject: number) {}

  /** Takes a slot for the project; false when it has its share in flight. */
  take(projectId: string): boolean {
    const taken = this.inFlight.get(projectId) ?? 0;
    if (taken >= this.perProject) return false;
    this.inFlight.set(projectId, taken + 1);
    return true;
  }

  release(projectId: string): void {
    const taken = (this.inFlight.get(projectId) ?? 1) - 1;
    if (taken <= 0) this.inFlight.delete(projectId);
    else this.inFlight.set(projectId, taken);
  }
}
