import type { Redis } from 'ioredis';
import { ContractError, decodeKeyRecord, type KeyRecord, type RedisKeys } from '@gateway/shared';

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
}

export class KeyCache {
  private readonly known = new Map<string, KeyRecord>();
  private readonly unknown = new Map<string, number>();
  private readonly pending = new Map<string, Promise<KeyRecord | null>>();
  /** Bumped by every invalidation; a miss that straddles one is fetched again. */
  private epoch = 0;
  private readonly negativeTtlMs: number;
  private readonly negativeMax: number;

  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    options: KeyCacheOptions = {},
  ) {
    this.negativeTtlMs = options.negativeTtlMs ?? 30_000;
    this.negativeMax = options.negativeMax ?? 100_000;
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

  /** The record if it is already in the map (never asks Redis): for attributing refusals. */
  peek(hash: string): KeyRecord | null {
    return this.known.get(hash) ?? null;
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
    this.known.delete(hash);
    this.unknown.delete(hash);
  }

  /** A project was deleted: forget all its keys. */
  forgetProject(projectId: string): void {
    this.epoch++;
    for (const [hash, record] of this.known) if (record.project_id === projectId) this.known.delete(hash);
  }

  /** Anything may have changed (reconnect, projection rebuilt): start from Redis again. */
  clear(): void {
    this.epoch++;
    this.known.clear();
    this.unknown.clear();
  }

  get size(): number {
    return this.known.size;
  }

  /** Changes whenever any invalidation is applied; a request re-checks its key if it moved. */
  get currentEpoch(): number {
    return this.epoch;
  }
}
