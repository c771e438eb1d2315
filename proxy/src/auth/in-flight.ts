import { Errors, GatewayError } from '@gateway/shared';

/**
 * Requests in flight, findable by key and by project, so a deletion can end them at once rather
 * than let a stream run on with a dead key. It also ends them when their key expires: one timer
 * per expiring key with requests in flight, not one per request.
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

/** Node's timers hold at most 2^31−1 ms (about 24.8 days); a longer delay fires after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

interface KeyExpiry {
  expiresAt: number;
  timer: NodeJS.Timeout;
}

export class InFlightRegistry {
  private readonly byKey = new Map<string, Set<Revocable>>();
  private readonly byProject = new Map<string, Set<Revocable>>();
  private readonly expiries = new Map<string, KeyExpiry>();
  private count = 0;

  /** Registers a request; `expiresAt` (ms) is its key's expiry, null when it has none. */
  add(request: Revocable, expiresAt: number | null = null): void {
    addTo(this.byKey, request.keyId, request);
    addTo(this.byProject, request.projectId, request);
    this.count++;
    if (expiresAt !== null && !this.expiries.has(request.keyId)) this.watchExpiry(request.keyId, expiresAt);
  }

  remove(request: Revocable): void {
    if (removeFrom(this.byKey, request.keyId, request)) {
      this.count--;
      if (!this.byKey.has(request.keyId)) this.unwatchExpiry(request.keyId);
    }
    removeFrom(this.byProject, request.projectId, request);
  }

  revokeKey(keyId: string, reason?: GatewayError): number {
    return this.revokeAll(this.byKey.get(keyId), reason);
  }

  revokeProject(projectId: string): number {
    return this.revokeAll(this.byProject.get(projectId));
  }

  get size(): number {
    return this.count;
  }

  /** Keys whose expiry is being watched (requests in flight on an expiring key). */
  get watchedExpiries(): number {
    return this.expiries.size;
  }

  /** Every registered request (for the end of a drain). */
  all(): Revocable[] {
    const out: Revocable[] = [];
    for (const set of this.byKey.values()) out.push(...set);
    return out;
  }

  private watchExpiry(keyId: string, expiresAt: number): void {
    const remaining = expiresAt - Date.now();
    // A delay past the timer limit is re-armed when the capped timer fires, not truncated to 1 ms.
    const timer = setTimeout(() => {
      this.expiries.delete(keyId);
      if (Date.now() < expiresAt) {
        if (this.byKey.has(keyId)) this.watchExpiry(keyId, expiresAt);
        return;
      }
      this.revokeKey(keyId, Errors.keyExpired());
    }, Math.min(Math.max(0, remaining), MAX_TIMER_MS));
    timer.unref();
    this.expiries.set(keyId, { expiresAt, timer });
  }

  private unwatchExpiry(keyId: string): void {
    const expiry = this.expiries.get(keyId);
    if (expiry === undefined) return;
    clearTimeout(expiry.timer);
    this.expiries.delete(keyId);
  }

  private revokeAll(set: Set<Revocable> | undefined, reason?: GatewayError): number {
    if (set === undefined) return 0;
    const victims = [...set];
    for (const request of victims) {
      this.remove(request);
      request.revoke(reason);
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
