import { deleteKeys, waitForReplica, encodeGuardrailSet, encodeInvalidation, encodeKeyRecord, encodeProjectPolicy, type Guardrail, type ProjectPolicy, type RedisKeys, type RedisClient } from '@gateway/shared';

/**
 * The Redis projection of live API keys, which is all the proxies read. Every change writes the
 * projection first and publishes the invalidation second: a proxy that reacts to the message by
 * re-reading Redis can only find the new state. Deletions are also in the invalidation log
 * (invalidation-log.ts), written with them in PostgreSQL; rebuilds are projection-rebuild.ts.
 *
 * On a Redis Cluster a key record and its project's key set sit in different slots, so no write
 * here spans both in one transaction: the key record is written first and deleted first, which is
 * the order a proxy (reading only key records) needs; the set only helps find a project's keys.
 */
/** How long a deletion waits for Redis before answering on the strength of the log alone. */
export const REDIS_BOUND_MS = 300;
/** How long a key creation waits for its projection before it is withdrawn (answered 503). */
export const PUT_BOUND_MS = 3_000;

export interface ProjectedKey {
  id: string;
  project_id: string;
  key_hash: string;
  expires_at: number | null;
  /** Default tags of the key's requests; absent or empty: none. */
  tags?: Record<string, string>;
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
    await this.redis.multi().del(setKey).del(this.keys.projectPolicy(projectId)).del(this.keys.projectBudgets(projectId)).del(this.keys.projectGuardrails(projectId)).exec();
    await this.publish({ kind: 'project.deleted', key_hash: null, key_id: null, project_id: projectId });
  }

  /** Writes a project's policy (quota, limits, models) and tells the proxies to re-read it. */
  async putPolicy(policy: Omit<ProjectPolicy, 'v'>): Promise<void> {
    await this.redis.set(this.keys.projectPolicy(policy.id), encodeProjectPolicy(policy));
    await this.projectUpdated(policy.id);
  }

  /** Writes a project's guardrails (none: the key is removed) and tells the proxies to re-read its policy. */
  async putGuardrails(projectId: string, guardrails: readonly Guardrail[]): Promise<void> {
    const key = this.keys.projectGuardrails(projectId);
    if (guardrails.length === 0) await this.redis.del(key);
    else await this.redis.set(key, encodeGuardrailSet(projectId, guardrails));
    await this.projectUpdated(projectId);
  }

  /** putGuardrails() within `boundMs`; see tryPutPolicy. */
  async tryPutGuardrails(projectId: string, guardrails: readonly Guardrail[], boundMs = REDIS_BOUND_MS): Promise<boolean> {
    return this.within(() => this.putGuardrails(projectId, guardrails), boundMs);
  }

  /** The project's name or quota changed: proxies drop what they cached about it. */
  async projectUpdated(projectId: string): Promise<void> {
    await this.publish({ kind: 'project.updated', key_hash: null, key_id: null, project_id: projectId });
  }

  /**
   * remove() within `boundMs`, for deletions already committed (and logged) in PostgreSQL: while
   * Redis is away the deletion must not wait for it. False when Redis did not confirm in time; the
   * command may still land once Redis is back, and the next rebuild removes whatever it left.
   */
  async tryRemove(key: Pick<ProjectedKey, 'id' | 'project_id' | 'key_hash'>, boundMs = REDIS_BOUND_MS): Promise<boolean> {
    return this.within(() => this.remove(key), boundMs);
  }

  /**
   * putPolicy() within `boundMs`, for a change already committed in PostgreSQL: false when Redis
   * did not confirm in time (or is known to be away). The rebuild that follows every reconnect
   * writes the committed policy and announces it, so the change still reaches the proxies.
   */
  async tryPutPolicy(policy: Omit<ProjectPolicy, 'v'>, boundMs = REDIS_BOUND_MS): Promise<boolean> {
    return this.within(() => this.putPolicy(policy), boundMs);
  }

  /** put() within `boundMs`: false when Redis did not confirm in time (or is known to be away). */
  async tryPut(key: ProjectedKey, boundMs = PUT_BOUND_MS): Promise<boolean> {
    return this.within(() => this.put(key), boundMs);
  }

  /** Redis answers commands now (a management call that needs it can fail fast otherwise). */
  get reachable(): boolean {
    return this.redis.status === 'ready';
  }

  /** removeProject() within `boundMs`; see tryRemove. */
  async tryRemoveProject(projectId: string, hashesFromDb: string[], boundMs = REDIS_BOUND_MS): Promise<boolean> {
    return this.within(() => this.removeProject(projectId, hashesFromDb), boundMs);
  }

  /**
   * True when `work` succeeded within `ms`; false on failure or time-out (never throws). Known to
   * be disconnected: the commands are not even queued; the rebuild after the reconnect repairs.
   */
  private async within(work: () => Promise<unknown>, ms: number): Promise<boolean> {
    if (!this.reachable) return false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    });
    return Promise.race([work().then(() => true, () => false), timeout]).finally(() => clearTimeout(timer));
  }

  private async publish(msg: Parameters<typeof encodeInvalidation>[0]): Promise<void> {
    await this.redis.publish(this.keys.invalidationChannel, encodeInvalidation(msg));
  }
}
