import { ContractError, decodeGuardrailSet, decodeProjectBudgets, decodeProjectPolicy, NO_RATE_LIMITS, type ProjectPolicy, type RedisKeys, type RedisClient } from '@gateway/shared';

/**
 * Each project's policy (quota, rate limits, allowed models, max_tokens cap), read from the Redis
 * projection once and kept until a project.updated message says it changed. A project with no
 * projected policy (written by a control plane that predates policies) has no limits, but only on
 * a Redis whose projection is complete (RedisKeys.projectionReady): on one being rebuilt the policy
 * may simply not be written yet, so the read fails (503) and nothing is remembered.
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

  /** The policy when this proxy has it already; null otherwise (nothing is read). */
  peek(projectId: string): ProjectPolicy | null {
    return this.known.get(projectId) ?? null;
  }

  private async fetch(projectId: string): Promise<ProjectPolicy> {
    for (let attempt = 0; ; attempt++) {
      const epoch = this.epoch;
      const policy = await this.read(projectId);
      // A change was announced while the GET was in flight: its answer may be the old policy.
      if (epoch !== this.epoch && attempt < 5) continue;
      if (policy === null) throw new Error('the key projection is being rebuilt');
      this.known.set(projectId, policy);
      return policy;
    }
  }

  /** The projected policy; null when Redis has none and its projection is not complete. */
  private async read(projectId: string): Promise<ProjectPolicy | null> {
    // One MGET: the policy, the budgets and the guardrails share the project's hash tag.
    const [raw, rawBudgets, guards] = await this.redis.mget(this.keys.projectPolicy(projectId), this.keys.projectBudgets(projectId), this.keys.projectGuardrails(projectId));
    try {
      const guardrails = guards === null || guards === undefined ? null : decodeGuardrailSet(guards).guardrails;
      const withGuards = (policy: ProjectPolicy): ProjectPolicy => (guardrails === null || guardrails.length === 0 ? policy : { ...policy, guardrails });
      if (raw === null || raw === undefined) return (await this.redis.exists(this.keys.projectionReady)) === 1 ? withGuards(withBudgets(openPolicy(projectId), rawBudgets)) : null;
      return withGuards(withBudgets(decodeProjectPolicy(raw), rawBudgets));
    } catch (err) {
      if (!(err instanceof ContractError)) throw err;
      // A newer policy shape we cannot read: refuse the project's traffic rather than ignore its limits.
      return { ...openPolicy(projectId), quota_tokens: 0 };
    }
  }

  /**
   * Changes may have been missed (the invalidation channel came back after a gap): read every
   * cached policy again, serving the cached one meanwhile, and keeping it when Redis has none yet
   * (it restarted empty and the control plane is rebuilding the projection) or cannot be read.
   */
  refreshAll(): void {
    const epoch = ++this.epoch;
    for (const projectId of [...this.known.keys()]) {
      this.read(projectId).then(
        (policy) => {
          if (policy !== null && epoch === this.epoch && this.known.has(projectId)) this.known.set(projectId, policy);
        },
        () => {},
      );
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

/** The budgets attached when there are any (a project without keeps the field absent: one read, no work). */
function withBudgets(policy: ProjectPolicy, raw: string | null | undefined): ProjectPolicy {
  if (raw === null || raw === undefined) return policy;
  const { budgets } = decodeProjectBudgets(raw);
  return budgets.length === 0 ? policy : { ...policy, budgets };
}

function openPolicy(id: string): ProjectPolicy {
  return { v: 1, id, quota_tokens: null, quota_period: 'total', rate_limits: NO_RATE_LIMITS, allowed_models: null, max_tokens_cap: null };
}
