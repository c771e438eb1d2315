import { ContractError, decodeKeyRecord, hashApiKey, type KeyRecord, type RedisKeys, type RedisClient } from '@gateway/shared';
import { BoundedMap } from './bounded-map.js';

/**
 * The proxy's in-process map of API keys (by SHA-256), filled from the Redis projection on a miss
 * and emptied by invalidations. A known key costs a Map lookup; an unknown one a single Redis GET,
 * after which it is remembered as unknown until a key.created message (or a bound TTL) says
 * otherwise, so a flood of bad keys does not become a flood of Redis round trips.
 *
 * Deleted keys and projects are remembered (bounded) as dead: they are never undeleted, and Redis
 * may still hold a deleted key for a while after it comes back from an outage (the deletion could
 * not reach it; the next projection rebuild removes it), so a lookup must not bring one back.
 *
 * A miss counts as "no such key" only on a Redis whose projection is complete
 * (RedisKeys.projectionReady). Without that marker (Redis restarted empty and the control plane is
 * still rebuilding) the lookup fails with ProjectionNotReady: the caller answers 503 and nothing is
 * remembered. The marker, once seen, is believed until the lookup connection drops.
 */
export class ProjectionNotReady extends Error {
  constructor() {
    super('the key projection is being rebuilt');
    this.name = 'ProjectionNotReady';
  }
}

export interface KeyCacheOptions {
  /** How long "no such key" is believed without a key.created message. */
  negativeTtlMs?: number;
  /** Upper bound on remembered unknown hashes (oldest forgotten first). */
  negativeMax?: number;
  /** Upper bound on presented keys remembered with their record (oldest forgotten first). */
  presentedMax?: number;
  /** Upper bound on deleted keys and projects remembered as dead (oldest forgotten first). */
  deadMax?: number;
}

interface Presented {
  hash: string;
  record: KeyRecord;
}

export class KeyCache {
  private readonly known = new Map<string, KeyRecord>();
  /** Unknown keys by hash, until when they are believed unknown. */
  private readonly unknown: BoundedMap<string, number>;
  private readonly pending = new Map<string, Promise<KeyRecord | null>>();
  /**
   * Known keys by the key as presented, so that a key seen before costs one Map lookup and no
   * SHA-256; `presentedByHash` lets an invalidation (which names the hash) find the entry.
   */
  private readonly presented: BoundedMap<string, Presented>;
  private readonly presentedByHash = new Map<string, string>();
  /** Bumped by every invalidation; a miss that straddles one is fetched again. */
  private epoch = 0;
  private readonly negativeTtlMs: number;
  /** Deleted keys by hash, with what they were (a refusal is still attributed to them). */
  private readonly deadKeys: BoundedMap<string, KeyRecord>;
  private readonly deadProjects = new Set<string>();
  private readonly deadMax: number;
  /** The projection marker was seen on the current lookup connection. */
  private projectionReady = false;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
    options: KeyCacheOptions = {},
  ) {
    this.negativeTtlMs = options.negativeTtlMs ?? 30_000;
    this.unknown = new BoundedMap(options.negativeMax ?? 100_000);
    this.presented = new BoundedMap(options.presentedMax ?? 100_000, (_apiKey, entry) => this.presentedByHash.delete(entry.hash));
    this.deadMax = options.deadMax ?? 100_000;
    this.deadKeys = new BoundedMap(this.deadMax);
    // A new connection may be to a new, empty server: look for the marker again.
    redis.on('close', () => {
      this.projectionReady = false;
    });
  }

  /**
   * lookup() by the key as the client sent it: hashed only the first time it is seen (and again
   * after an invalidation of it).
   */
  lookupPresented(apiKey: string, now: number): KeyRecord | null | Promise<KeyRecord | null> {
    const seen = this.presented.get(apiKey);
    if (seen !== undefined) {
      if (seen.record.expires_at === null || seen.record.expires_at > now) return seen.record;
      this.forgetPresented(seen.hash);
    }
    const hash = hashApiKey(apiKey);
    const found = this.lookup(hash, now);
    if (found !== null && !(found instanceof Promise)) this.remember(apiKey, hash, found);
    return found;
  }

  /** The record of a presented key if it is already in the map (never asks Redis). */
  peekPresented(apiKey: string): KeyRecord | null {
    const seen = this.presented.get(apiKey)?.record;
    if (seen !== undefined) return seen;
    const hash = hashApiKey(apiKey);
    return this.known.get(hash) ?? null;
  }

  /** What a deleted or expired key was (its id and project), if this proxy knew it. */
  deadRecord(apiKey: string): KeyRecord | null {
    if (this.deadKeys.size === 0) return null;
    const dead = this.deadKeys.get(hashApiKey(apiKey));
    return dead === undefined || dead.id === '' ? null : dead;
  }

  private remember(apiKey: string, hash: string, record: KeyRecord): void {
    this.presented.set(apiKey, { hash, record });
    this.presentedByHash.set(hash, apiKey);
  }

  private forgetPresented(hash: string): void {
    const apiKey = this.presentedByHash.get(hash);
    if (apiKey === undefined) return;
    this.presentedByHash.delete(hash);
    this.presented.delete(apiKey);
  }

  /** The record, null for no such (or an expired) key, or a promise when Redis must be asked. */
  lookup(hash: string, now: number): KeyRecord | null | Promise<KeyRecord | null> {
    if (this.deadKeys.has(hash)) return null;
    const hit = this.known.get(hash);
    if (hit !== undefined) {
      if (hit.expires_at !== null && hit.expires_at <= now) {
        this.known.delete(hash);
        // Expired for good; remembered so that its refusals still name it.
        this.markDead(hash, hit);
        return null;
      }
      return hit;
    }
    const unknownUntil = this.unknown.get(hash);
    if (unknownUntil !== undefined) {
      if (unknownUntil > now) return null;
      this.unknown.delete(hash);
    }
    let pending = this.pending.get(hash);
    if (pending === undefined) {
      pending = this.fetch(hash).finally(() => this.pending.delete(hash));
      this.pending.set(hash, pending);
    }
    return pending;
  }

  private async fetch(hash: string): Promise<KeyRecord | null> {
    for (let attempt = 0; ; attempt++) {
      const epoch = this.epoch;
      const raw = await this.redis.get(this.keys.apiKey(hash));
      // An invalidation arrived while the GET was in flight: its answer may predate the change.
      if (epoch !== this.epoch && attempt < 5) continue;
      if (raw === null && !this.projectionReady) {
        this.projectionReady = (await this.redis.exists(this.keys.projectionReady)) === 1;
        if (!this.projectionReady) throw new ProjectionNotReady();
        // The marker may have been set after the GET: the key may have been written meanwhile.
        continue;
      }
      let record: KeyRecord | null = null;
      if (raw !== null) {
        try {
          record = decodeKeyRecord(raw);
        } catch (err) {
          // A record of a newer contract version: refuse the key rather than misread it.
          if (!(err instanceof ContractError)) throw err;
        }
      }
      const now = Date.now();
      if (record === null) {
        this.rememberUnknown(hash, now);
        return null;
      }
      if (this.deadKeys.has(hash)) return null;
      if (this.deadProjects.has(record.project_id) || (record.expires_at !== null && record.expires_at <= now)) {
        this.markDead(hash, record);
        return null;
      }
      this.known.set(hash, record);
      return record;
    }
  }

  private rememberUnknown(hash: string, now: number): void {
    this.unknown.set(hash, now + this.negativeTtlMs);
  }

  /** A key was deleted or created: forget whatever we believed about it. */
  forgetKey(hash: string): void {
    this.epoch++;
    this.forgetPresented(hash);
    this.known.delete(hash);
    this.unknown.delete(hash);
  }

  /** A key was deleted: forget it, and refuse it from now on whatever Redis says. */
  keyDeleted(hash: string, keyId: string | null, projectId: string | null): void {
    this.forgetKey(hash);
    this.markDead(hash, { v: 1, id: keyId ?? '', project_id: projectId ?? '', expires_at: null });
  }

  private markDead(hash: string, record: KeyRecord): void {
    this.deadKeys.set(hash, record);
  }

  /** A project was deleted: forget its keys, and refuse any of them from now on whatever Redis says. */
  projectDeleted(projectId: string): void {
    this.forgetProject(projectId);
    if (this.deadProjects.size >= this.deadMax) {
      const oldest = this.deadProjects.values().next();
      if (!oldest.done) this.deadProjects.delete(oldest.value);
    }
    this.deadProjects.add(projectId);
  }

  /** A project was deleted: forget all its keys. */
  forgetProject(projectId: string): void {
    this.epoch++;
    for (const [hash, record] of this.known) {
      if (record.project_id !== projectId) continue;
      this.known.delete(hash);
      this.forgetPresented(hash);
    }
  }

  /** A key.created may have been missed: believe no "unknown key" answer any more. */
  forgetUnknown(): void {
    this.epoch++;
    this.unknown.clear();
  }

  /**
   * Anything may have changed (deletions missed on every channel): start from Redis again. What
   * is known dead stays dead.
   */
  clear(): void {
    this.epoch++;
    this.known.clear();
    this.unknown.clear();
    this.presented.clear();
    this.presentedByHash.clear();
  }

  get size(): number {
    return this.known.size;
  }

  /** Changes whenever any invalidation is applied; a request re-checks its key if it moved. */
  get currentEpoch(): number {
    return this.epoch;
  }
}
