import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { decodeKeyRecord, encodeGuardrailSet, encodeInvalidation, encodeKeyRecord, encodeProjectPolicy, scanKeys, type InvalidationKind, type RedisClient, type RedisKeys } from '@gateway/shared';
import type { Db } from '../db/connect.js';
import { allGuardrails } from '../db/guardrails.js';
import { listLiveProjects, policyOf } from '../db/projects.js';

/**
 * Makes the Redis projection match PostgreSQL: at control-plane start and after every Redis
 * reconnect (Redis may be a new, empty server, or one that missed deletions made while it was
 * away). One control plane rebuilds at a time, under a lock; the others wait for it and skip.
 *
 * Proxies are told only what changed: a projected key found dead is announced as its own
 * key.deleted, a policy that differs from the one Redis held as project.updated. Nothing is
 * announced for what Redis merely lost (it was right in the proxies' maps already), so a rolling
 * deploy of control planes, or a Redis restart, is not a fleet-wide cache flush. When the rebuild
 * is complete it sets RedisKeys.projectionReady: until then a proxy's lookup that misses answers
 * 503 instead of "no such key".
 *
 * No command spans two keys (MULTI included): keys may live in different cluster slots.
 */
export interface RebuildResult {
  live: number;
  removed: number;
  policiesChanged: number;
}

const LOCK_TTL_MS = 60_000;
const WAIT_POLL_MS = 200;
const BATCH = 500;

// KEYS[1] lock; ARGV[1] owner token. Deletes (or extends by ARGV[2] ms) the lock only if we hold it.
const RELEASE_LUA = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;
const EXTEND_LUA = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`;

export class ProjectionRebuilder {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
    private readonly log: Pick<Logger, 'info' | 'warn'>,
  ) {}

  /**
   * Rebuilds under the lock. If another control plane holds it, waits until it is released and
   * returns null when that rebuild completed (the projection is ready); if it did not (its holder
   * died), takes the lock and rebuilds itself.
   */
  async run(sql: Db): Promise<RebuildResult | null> {
    const token = randomUUID();
    for (;;) {
      const acquired = await this.redis.set(this.keys.projectionRebuildLock, token, 'PX', LOCK_TTL_MS, 'NX');
      if (acquired === 'OK') break;
      while ((await this.redis.exists(this.keys.projectionRebuildLock)) === 1) await sleep(WAIT_POLL_MS);
      if ((await this.redis.exists(this.keys.projectionReady)) === 1) return null;
    }
    const extend = setInterval(() => {
      this.redis.eval(EXTEND_LUA, 1, this.keys.projectionRebuildLock, token, LOCK_TTL_MS).catch(() => {});
    }, LOCK_TTL_MS / 3);
    extend.unref();
    try {
      const result = await this.rebuild(sql);
      await this.redis.set(this.keys.projectionReady, String(Date.now()));
      await this.redis.incr(this.keys.projectionEpoch);
      return result;
    } finally {
      clearInterval(extend);
      await this.redis.eval(RELEASE_LUA, 1, this.keys.projectionRebuildLock, token).catch(() => {});
    }
  }

  /** Writes every live key, then deletes projected keys that are no longer live. */
  private async rebuild(sql: Db): Promise<RebuildResult> {
    const [{ now: snapshotAt }] = (await sql<{ now: Date }[]>`select now()`) as unknown as [{ now: Date }];
    const rows = await sql<{ id: string; project_id: string; key_hash: string; expires_at: Date | null; tags: Record<string, string> }[]>`
      select k.id, k.project_id, k.key_hash, k.expires_at, k.tags
      from api_keys k join projects p on p.id = k.project_id
      where k.deleted_at is null and p.deleted_at is null and (k.expires_at is null or k.expires_at > now())`;
    const live = new Set<string>();
    const byProject = new Map<string, string[]>();
    // Writing before deleting: a valid key is never missing from Redis meanwhile.
    for (let i = 0; i < rows.length; i += BATCH) {
      await Promise.all(
        rows.slice(i, i + BATCH).map((row) => {
          const expiresAt = row.expires_at === null ? null : row.expires_at.getTime();
          live.add(row.key_hash);
          const list = byProject.get(row.project_id) ?? [];
          list.push(row.key_hash);
          byProject.set(row.project_id, list);
          const record = encodeKeyRecord({ id: row.id, project_id: row.project_id, expires_at: expiresAt, tags: row.tags });
          const name = this.keys.apiKey(row.key_hash);
          return expiresAt === null ? this.redis.set(name, record) : this.redis.set(name, record, 'PXAT', expiresAt);
        }),
      );
    }

    let removed = 0;
    // A key deleted after the snapshot was read may just have been written back above. Its
    // DELETE removed it from Redis before or after our write; catch the "before" case here (the
    // margin covers transactions that started before the snapshot and committed after it).
    const resurrected = await sql<{ id: string; project_id: string; key_hash: string }[]>`
      select k.id, k.project_id, k.key_hash
      from api_keys k join projects p on p.id = k.project_id
      where (k.deleted_at >= ${snapshotAt} - interval '5 minutes' or p.deleted_at >= ${snapshotAt} - interval '5 minutes')`;
    for (const key of resurrected) {
      if (!live.delete(key.key_hash)) continue;
      await this.redis.del(this.keys.apiKey(key.key_hash));
      await this.publish('key.deleted', key.key_hash, key.id, key.project_id);
      removed++;
    }

    const keyPrefixLength = this.keys.apiKey('').length;
    for await (const batch of scanKeys(this.redis, this.keys.apiKeyPattern())) {
      const candidates = batch.filter((k) => !live.has(k.slice(keyPrefixLength)));
      if (candidates.length === 0) continue;
      // A key created while this rebuild ran is live but was not in the snapshot: ask again.
      const hashes = candidates.map((k) => k.slice(keyPrefixLength));
      const stillLive = await sql<{ key_hash: string }[]>`
        select k.key_hash from api_keys k join projects p on p.id = k.project_id
        where k.key_hash = any(${hashes}) and k.deleted_at is null and p.deleted_at is null`;
      const keep = new Set(stillLive.map((r) => r.key_hash));
      for (const name of candidates) {
        const hash = name.slice(keyPrefixLength);
        if (keep.has(hash)) continue;
        const raw = await this.redis.get(name);
        if ((await this.redis.del(name)) === 0) continue;
        removed++;
        // A dead key Redis still held (its DELETE could not reach Redis): proxies that cached it
        // from here drop it, and cut its requests in flight.
        const record = raw === null ? null : safeDecode(raw);
        await this.publish('key.deleted', hash, record?.id ?? null, record?.project_id ?? null);
      }
    }
    for await (const batch of scanKeys(this.redis, this.keys.projectKeysPattern())) {
      await Promise.all(batch.map((name) => this.redis.del(name)));
    }
    for (const [projectId, hashes] of byProject) await this.redis.sadd(this.keys.projectKeys(projectId), ...hashes);

    let policiesChanged = 0;
    const projects = await listLiveProjects(sql);
    const guardrails = await allGuardrails(sql);
    for (let i = 0; i < projects.length; i += BATCH) {
      const changed = await Promise.all(
        projects.slice(i, i + BATCH).map(async (project) => {
          const encoded = encodeProjectPolicy(policyOf(project));
          const before = await this.redis.getset(this.keys.projectPolicy(project.id), encoded);
          const list = guardrails.get(project.id);
          const guardsKey = this.keys.projectGuardrails(project.id);
          const guards = list === undefined ? null : encodeGuardrailSet(project.id, list);
          const guardsBefore = guards === null ? await this.redis.getdel(guardsKey) : await this.redis.getset(guardsKey, guards);
          // A policy Redis lost is not a change: the proxies hold the one they read before.
          const policyChanged = before !== null && before !== encoded;
          const guardsChanged = !sameJson(guardsBefore, guards) && !(guardsBefore === null && before === null);
          return policyChanged || guardsChanged ? project.id : null;
        }),
      );
      for (const projectId of changed) {
        if (projectId === null) continue;
        policiesChanged++;
        await this.publish('project.updated', null, null, projectId);
      }
    }
    // Nothing to copy (a first start) is not news; otherwise say what the proxies now find in Redis.
    if (live.size > 0 || removed > 0 || policiesChanged > 0) {
      this.log.info({ keys: live.size, removed, policies_changed: policiesChanged }, 'API keys copied into Redis for the proxies');
    }
    return { live: live.size, removed, policiesChanged };
  }

  private async publish(kind: InvalidationKind, keyHash: string | null, keyId: string | null, projectId: string | null): Promise<void> {
    await this.redis.publish(this.keys.invalidationChannel, encodeInvalidation({ kind, key_hash: keyHash, key_id: keyId, project_id: projectId }));
  }
}

/**
 * Two encodings of the same JSON (jsonb returns an object's keys in its own order, the API wrote
 * them in the client's): compared with every object's keys sorted.
 */
function sameJson(a: string | null, b: string | null): boolean {
  if (a === null || b === null) return a === b;
  const sorted = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(sorted)
      : value !== null && typeof value === 'object'
        ? Object.fromEntries(Object.keys(value).sort().map((k) => [k, sorted((value as Record<string, unknown>)[k])]))
        : value;
  try {
    return JSON.stringify(sorted(JSON.parse(a))) === JSON.stringify(sorted(JSON.parse(b)));
  } catch {
    return false;
  }
}

function safeDecode(raw: string) {
  try {
    return decodeKeyRecord(raw);
  } catch {
    return null;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
