import { Errors, GatewayError } from '@gateway/shared';

/**
 * Requests in flight, findable by key and by project, so a deletion can end them at once rather
 * than let a stream run on with a dead key. It also ends them when their key expires: one timer
 * per expiring key with requests in flight, not one per request. Each key's and each project's
 * requests are a doubly linked list through an entry the request holds, so adding and removing
 * one (twice per request) hashes nothing: a Set of request objects did, and showed in profiles.
 * A list left empty stays in its map (with its key's expiry watch) until many have: a key whose
 * requests are answered one at a time (a cache hit is answered in the tick it arrives) would
 * otherwise add and delete its map entries, and rehash the maps, on every request.
 */
export interface Revocable {
  readonly keyId: string;
  readonly projectId: string;
  /**
   * Ends the request at once and aborts its upstream call: with 401 UNAUTHORIZED (key or project
   * deleted) unless another reason is given; streams get the error as one SSE event.
   */
  revoke(reason?: GatewayError): void;
  /** The registry's own: this request's place in its lists, null while not registered. */
  inFlightEntry: InFlightEntry | null;
}

/** Node's timers hold at most 2^31−1 ms (about 24.8 days); a longer delay fires after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Empty key lists kept before they are all dropped at once. */
export const IDLE_LISTS_KEPT = 1024;

interface KeyExpiry {
  expiresAt: number;
  timer: NodeJS.Timeout;
}

/** The requests of one key or one project. */
class RequestList {
  head: InFlightEntry | null = null;
  size = 0;
  /** Empty and counted among the registry's idle lists. */
  idle = false;

  constructor(readonly id: string) {}
}

export class InFlightEntry {
  keyPrev: InFlightEntry | null = null;
  keyNext: InFlightEntry | null = null;
  projectPrev: InFlightEntry | null = null;
  projectNext: InFlightEntry | null = null;

  constructor(
    readonly request: Revocable,
    readonly keyList: RequestList,
    readonly projectList: RequestList,
  ) {}
}

export class InFlightRegistry {
  private readonly byKey = new Map<string, RequestList>();
  private readonly byProject = new Map<string, RequestList>();
  private readonly expiries = new Map<string, KeyExpiry>();
  private count = 0;
  /** Key lists with no request in them, still in `byKey`. */
  private idleKeyLists = 0;

  /** Registers a request (once; again is a no-op); `expiresAt` (ms) is its key's expiry, null when it has none. */
  add(request: Revocable, expiresAt: number | null = null): void {
    if (request.inFlightEntry !== null) return;
    const entry = new InFlightEntry(request, listOf(this.byKey, request.keyId), listOf(this.byProject, request.projectId));
    if (entry.keyList.idle) {
      entry.keyList.idle = false;
      this.idleKeyLists--;
    }
    const keyHead = entry.keyList.head;
    entry.keyNext = keyHead;
    if (keyHead !== null) keyHead.keyPrev = entry;
    entry.keyList.head = entry;
    entry.keyList.size++;
    const projectHead = entry.projectList.head;
    entry.projectNext = projectHead;
    if (projectHead !== null) projectHead.projectPrev = entry;
    entry.projectList.head = entry;
    entry.projectList.size++;
    request.inFlightEntry = entry;
    this.count++;
    if (expiresAt !== null && !this.expiries.has(request.keyId)) this.watchExpiry(request.keyId, expiresAt);
  }

  remove(request: Revocable): void {
    const entry = request.inFlightEntry;
    if (entry === null) return;
    request.inFlightEntry = null;
    this.count--;
    const keys = entry.keyList;
    if (entry.keyPrev !== null) entry.keyPrev.keyNext = entry.keyNext;
    else keys.head = entry.keyNext;
    if (entry.keyNext !== null) entry.keyNext.keyPrev = entry.keyPrev;
    const projects = entry.projectList;
    if (entry.projectPrev !== null) entry.projectPrev.projectNext = entry.projectNext;
    else projects.head = entry.projectNext;
    if (entry.projectNext !== null) entry.projectNext.projectPrev = entry.projectPrev;
    projects.size--;
    if (--keys.size === 0) {
      keys.idle = true;
      if (++this.idleKeyLists > IDLE_LISTS_KEPT) this.dropIdleLists();
    }
  }

  /** Key lists currently held, busy or idle (for tests). */
  get keyLists(): number {
    return this.byKey.size;
  }

  /** Drops every empty list, and the expiry watches of keys with no request left. */
  private dropIdleLists(): void {
    for (const [id, list] of this.byKey) {
      if (list.size !== 0) continue;
      this.byKey.delete(id);
      this.unwatchExpiry(id);
    }
    for (const [id, list] of this.byProject) if (list.size === 0) this.byProject.delete(id);
    this.idleKeyLists = 0;
  }

  revokeKey(keyId: string, reason?: GatewayError): number {
    const victims: Revocable[] = [];
    for (let e = this.byKey.get(keyId)?.head ?? null; e !== null; e = e.keyNext) victims.push(e.request);
    return this.revokeAll(victims, reason);
  }

  revokeProject(projectId: string): number {
    const victims: Revocable[] = [];
    for (let e = this.byProject.get(projectId)?.head ?? null; e !== null; e = e.projectNext) victims.push(e.request);
    return this.revokeAll(victims);
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
    for (const list of this.byKey.values()) for (let e = list.head; e !== null; e = e.keyNext) out.push(e.request);
    return out;
  }

  private watchExpiry(keyId: string, expiresAt: number): void {
    const remaining = expiresAt - Date.now();
    // A delay past the timer limit is re-armed when the capped timer fires, not truncated to 1 ms.
    const timer = setTimeout(() => {
      this.expiries.delete(keyId);
      if (Date.now() < expiresAt) {
        if ((this.byKey.get(keyId)?.size ?? 0) > 0) this.watchExpiry(keyId, expiresAt);
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

  /** Taken from the lists first: a revoke() may end other requests, or register new ones. */
  private revokeAll(victims: Revocable[], reason?: GatewayError): number {
    for (const request of victims) {
      this.remove(request);
      request.revoke(reason);
    }
    return victims.length;
  }
}

function listOf(map: Map<string, RequestList>, id: string): RequestList {
  let list = map.get(id);
  if (list === undefined) {
    list = new RequestList(id);
    map.set(id, list);
  }
  return list;
}
