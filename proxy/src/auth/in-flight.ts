import type { GatewayError } from '@gateway/shared';

/**
 * Requests in flight, findable by key and by project, so a deletion can end them at once rather
 * than let a stream run on with a dead key.
 */
export interface Revocable {
  readonly keyId: string;
  readonly projectId: string;
  /**
   * Ends the request at once and aborts its upstream call: with 401 UNAUTHORIZED (key or project
   * deleted) unless another reason is given; streams get the error as one SSE event.
   */
  revoke(reason?: GatewayError): void;
}

export class InFlightRegistry {
  private readonly byKey = new Map<string, Set<Revocable>>();
  private readonly byProject = new Map<string, Set<Revocable>>();
  private count = 0;

  add(request: Revocable): void {
    addTo(this.byKey, request.keyId, request);
    addTo(this.byProject, request.projectId, request);
    this.count++;
  }

  remove(request: Revocable): void {
    if (removeFrom(this.byKey, request.keyId, request)) this.count--;
    removeFrom(this.byProject, request.projectId, request);
  }

  revokeKey(keyId: string): number {
    return this.revokeAll(this.byKey.get(keyId));
  }

  revokeProject(projectId: string): number {
    return this.revokeAll(this.byProject.get(projectId));
  }

  get size(): number {
    return this.count;
  }

  /** Every registered request (for the end of a drain). */
  all(): Revocable[] {
    const out: Revocable[] = [];
    for (const set of this.byKey.values()) out.push(...set);
    return out;
  }

  private revokeAll(set: Set<Revocable> | undefined): number {
    if (set === undefined) return 0;
    const victims = [...set];
    for (const request of victims) {
      this.remove(request);
      request.revoke();
    }
    return victims.length;
  }
}

function addTo(map: Map<string, Set<Revocable>>, id: string, request: Revocable): void {
  let set = map.get(id);
  if (set === undefined) {
    set = new Set();
    map.set(id, set);
  }
  set.add(request);
}

function removeFrom(map: Map<string, Set<Revocable>>, id: string, request: Revocable): boolean {
  const set = map.get(id);
  if (set === undefined || !set.delete(request)) return false;
  if (set.size === 0) map.delete(id);
  return true;
}
