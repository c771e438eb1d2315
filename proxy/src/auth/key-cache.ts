import { ContractError, decodeKeyRecord, hashApiKey, type KeyRecord, type RedisKeys, type RedisClient } from '@gateway/shared';

/**
 * The proxy's in-process map of API keys (by SHA-256), filled from the Redis projection on a miss
 * and emptied by invalidations. A known key costs a Map lookup; an unknown one a single Redis GET,
 * after which it is remembered as unknown until a key.created message (or a bound TTL) says
 * otherwise, so a flood of bad keys does not become a flood of Redis round trips.
 */
export interface KeyCacheOptions {
  /** How long "no such key" is believed without a key.created message. */
  negativeTtlMs?: number;
  /** Upper bound on remembered unknown hashes (oldest forgotten first). */
  negativeMax?: number;
  /** Upper bound on presented keys remembered with their record (oldest forgotten first). */
  presentedMax?: number;
}

interface Presented {
  hash: string;
  record: KeyRecord;
}

export class KeyCache {
  private readonly known = new Map<string, KeyRecord>();
  private readonly unknown = new Map<string, number>();
  private readonly pending = new Map<string, Promise<KeyRecord | null>>();
  /**
   * Known keys by the key as presented, so that a key seen before costs one Map lookup and no
   * SHA-256; `presentedByHash` lets an invalidation (which names the hash) find the entry.
   */
  private readonly presented = new Map<string, Presented>();
  private readonly presentedByHash = new Map<string, string>();
  private readonly presentedMax: number;
  /** Bumped by every invalidation; a miss that straddles one is fetched again. */
  private epoch = 0;
  private readonly negativeTtlMs: number;
  private readonly negativeMax: number;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
    options: KeyCacheOptions = {},
  ) {
    this.negativeTtlMs = options.negativeTtlMs ?? 30_000;
    this.negativeMax = options.negativeMax ?? 100_000;
    this.presentedMax = options.presentedMax ?? 100_000;
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
    return this.presented.get(apiKey)?.record ?? this.known.get(hashApiKey(apiKey)) ?? null;
  }

  private remember(apiKey: string, hash: string, record: KeyRecord): void {
    if (this.presented.size >= this.presentedMax) {
      const oldest = this.presented.entries().next();
      if (!oldest.done) this.forgetPresented(oldest.value[1].hash);
    }
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
    const hit = this.known.get(hash);
    if (hit !== undefined) {
      if (hit.expires_at !== null && hit.expires_at <= now) {
        this.known.delete(hash);
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
      if (record !== null && (record.expires_at === null || record.expires_at > now)) {
        this.known.set(hash, record);
        return record;
      }
      this.rememberUnknown(hash, now);
      return null;
    }
  }

  private rememberUnknown(hash: string, now: number): void {
    if (this.unknown.size >= this.negativeMax) {
      const oldest = this.unknown.keys().next();
      if (!oldest.done) this.unknown.delete(oldest.value);
    }
    this.unknown.set(hash, now + this.negativeTtlMs);
  }

  /** A key was deleted or created: forget whatever we believed about it. */
  forgetKey(hash: string): void {
    this.epoch++;
    this.forgetPresented(hash);
    this.known.delete(hash);
    this.unknown.delete(hash);
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

  /** Anything may have changed (reconnect, projection rebuilt): start from Redis again. */
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
