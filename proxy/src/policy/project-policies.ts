import { ContractError, decodeProjectPolicy, NO_RATE_LIMITS, type ProjectPolicy, type RedisKeys, type RedisClient } from '@gateway/shared';

/**
 * Each project's policy (quota, rate limits, allowed models, max_tokens cap), read from the Redis
 * projection once and kept until a project.updated message says it changed. A project with no
 * projected policy (written by a control plane that predates policies) has no limits.
 */
export class ProjectPolicies {
  private readonly known = new Map<string, ProjectPolicy>();
  private readonly pending = new Map<string, Promise<ProjectPolicy>>();
  private epoch = 0;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
  ) {}

  get(projectId: string): ProjectPolicy | Promise<ProjectPolicy> {
    const hit = this.known.get(projectId);
    if (hit !== undefined) return hit;
    let pending = this.pending.get(projectId);
    if (pending === undefined) {
      pending = this.fetch(projectId).finally(() => this.pending.delete(projectId));
      this.pending.set(projectId, pending);
    }
    return pending;
  }

  private async fetch(projectId: string): Promise<ProjectPolicy> {
    for (let attempt = 0; ; attempt++) {
      const epoch = this.epoch;
      const raw = await this.redis.get(this.keys.projectPolicy(projectId));
      // A change was announced while the GET was in flight: its answer may be the old policy.
      if (epoch !== this.epoch && attempt < 5) continue;
      let policy: ProjectPolicy = openPolicy(projectId);
      if (raw !== null) {
        try {
          policy = decodeProjectPolicy(raw);
        } catch (err) {
          if (!(err instanceof ContractError)) throw err;
          // A newer policy shape we cannot read: refuse the project's traffic rather than ignore its limits.
          policy = { ...openPolicy(projectId), quota_tokens: 0 };
        }
      }
      this.known.set(projectId, policy);
      return policy;
    }
  }

  forget(projectId: string): void {
    this.epoch++;
    this.known.delete(projectId);
  }

  clear(): void {
    this.epoch++;
    this.known.clear();
  }
}

function openPolicy(id: string): ProjectPolicy {
  return { v: 1, id, quota_tokens: null, quota_period: 'total', rate_limits: NO_RATE_LIMITS, allowed_models: null, max_tokens_cap: null };
}
