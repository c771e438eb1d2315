import { deleteKeys, waitForReplica, encodeInvalidation, encodeKeyRecord, encodeProjectPolicy, runPerSlot, scanKeys, type ProjectPolicy, type RedisKeys, type RedisClient, type SlotCommand } from '@gateway/shared';
import type { Db } from '../db/connect.js';
import { listLiveProjects, policyOf } from '../db/projects.js';

/**
 * The Redis projection of live API keys, which is all the proxies read. Every change writes the
 * projection first and publishes the invalidation second: a proxy that reacts to the message by
 * re-reading Redis can only find the new state.
 *
 * On a Redis Cluster a key record and its project's key set sit in different slots, so no write
 * here spans both in one transaction: the key record is written first and deleted first, which is
 * the order a proxy (reading only key records) needs; the set only helps find a project's keys.
 */
export interface ProjectedKey {
  id: string;
  project_id: string;
  key_hash: string;
  expires_at: number | null;
}

export class KeyProjection {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
  ) {}

  async put(key: ProjectedKey): Promise<void> {
    const multi = this.redis.multi().set(this.keys.apiKey(key.key_hash), encodeKeyRecord(key));
    // Redis forgets an expiring key by itself; the proxy also checks expires_at on every use.
    if (key.expires_at !== null) multi.pexpireat(this.keys.apiKey(key.key_hash), key.expires_at);
    await multi.exec();
    await this.redis.sadd(this.keys.projectKeys(key.project_id), key.key_hash);
    await this.publish({ kind: 'key.created', key_hash: key.key_hash, key_id: key.id, project_id: key.project_id });
  }

  async remove(key: Pick<ProjectedKey, 'id' | 'project_id' | 'key_hash'>): Promise<void> {
    await this.redis.del(this.keys.apiKey(key.key_hash));
    // A failover right after this answer must not bring the key back (Sentinel or a cluster).
    await waitForReplica(this.redis, this.keys.apiKey(key.key_hash));
    await this.redis.srem(this.keys.projectKeys(key.project_id), key.key_hash);
    await this.publish({ kind: 'key.deleted', key_hash: key.key_hash, key_id: key.id, project_id: key.project_id });
  }

  async removeProject(projectId: string, hashesFromDb: string[]): Promise<void> {
    const setKey = this.keys.projectKeys(projectId);
    const projected = await this.redis.smembers(setKey);
    const all = new Set([...projected, ...hashesFromDb]);
    const records = [...all].map((hash) => this.keys.apiKey(hash));
    await deleteKeys(this.redis, records);
    await Promise.all(records.map((record) => waitForReplica(this.redis, record)));
    // The set and the policy share the project's hash tag.
    await this.redis.multi().del(setKey).del(this.keys.projectPolicy(projectId)).exec();
    await this.publish({ kind: 'project.deleted', key_hash: null, key_id: null, project_id: projectId });
  }

  /** Writes a project's policy (quota, limits, models) and tells the proxies to re-read it. */
  async putPolicy(policy: Omit<ProjectPolicy, 'v'>): Promise<void> {
    await this.redis.set(this.keys.projectPolicy(policy.id), encodeProjectPolicy(policy));
    await this.projectUpdated(policy.id);
  }

  /** The project's name or quota changed: proxies drop what they cached about it. */
  async projectUpdated(projectId: string): Promise<void> {
    await this.publish({ kind: 'project.updated', key_hash: null, key_id: null, project_id: projectId });
  }

  /**
   * Makes Redis match Postgres: writes every live key, then deletes projected keys that are no
   * longer live. Writing before deleting means a valid key is never missing from Redis meanwhile.
   */
  async rebuild(sql: Db): Promise<{ live: number; removed: number }> {
    const [{ now: snapshotAt }] = (await sql<{ now: Date }[]>`select now()`) as unknown as [{ now: Date }];
    const rows = await sql<{ id: string; project_id: string; key_hash: string; expires_at: Date | null }[]>`
      select k.id, k.project_id, k.key_hash, k.expires_at
      from api_keys k join projects p on p.id = k.project_id
      where k.deleted_at is null and p.deleted_at is null and (k.expires_at is null or k.expires_at > now())`;
    const live = new Set<string>();
    const byProject = new Map<string, string[]>();
    for (let i = 0; i < rows.length; i += 500) {
      const writes: SlotCommand[] = [];
      for (const row of rows.slice(i, i + 500)) {
        const expiresAt = row.expires_at === null ? null : row.expires_at.getTime();
        writes.push(['set', this.keys.apiKey(row.key_hash), encodeKeyRecord({ id: row.id, project_id: row.project_id, expires_at: expiresAt })]);
        if (expiresAt !== null) writes.push(['pexpireat', this.keys.apiKey(row.key_hash), expiresAt]);
        live.add(row.key_hash);
        const list = byProject.get(row.project_id) ?? [];
        list.push(row.key_hash);
        byProject.set(row.project_id, list);
      }
      await runPerSlot(this.redis, writes);
    }

    // A key deleted after the snapshot was read may just have been written back above. Its
    // DELETE removed it from Redis before or after our write; catch the "before" case here (the
    // margin covers transactions that started before the snapshot and committed after it).
    const resurrected = await sql<{ id: string; project_id: string; key_hash: string }[]>`
      select k.id, k.project_id, k.key_hash
      from api_keys k join projects p on p.id = k.project_id
      where (k.deleted_at >= ${snapshotAt} - interval '5 minutes' or p.deleted_at >= ${snapshotAt} - interval '5 minutes')`;
    for (const key of resurrected) {
      if (!live.delete(key.key_hash)) continue;
      await this.remove(key);
    }

    let removed = 0;
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
      const stale = candidates.filter((k) => !keep.has(k.slice(keyPrefixLength)));
      if (stale.length > 0) removed += await deleteKeys(this.redis, stale);
    }
    for await (const batch of scanKeys(this.redis, this.keys.projectKeysPattern())) {
      await deleteKeys(this.redis, batch);
    }
    for (const [projectId, hashes] of byProject) await this.redis.sadd(this.keys.projectKeys(projectId), ...hashes);

    const policies = await listLiveProjects(sql);
    for (let i = 0; i < policies.length; i += 500) {
      const writes: SlotCommand[] = policies.slice(i, i + 500).map((project) => ['set', this.keys.projectPolicy(project.id), encodeProjectPolicy(policyOf(project))]);
      await runPerSlot(this.redis, writes);
    }

    await this.redis.incr(this.keys.projectionEpoch);
    await this.publish({ kind: 'projection.rebuilt', key_hash: null, key_id: null, project_id: null });
    return { live: live.size, removed };
  }

  private async publish(msg: Parameters<typeof encodeInvalidation>[0]): Promise<void> {
    await this.redis.publish(this.keys.invalidationChannel, encodeInvalidation(msg));
  }
}
