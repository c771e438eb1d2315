import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetWindow, connectRedis, GatewayError, parseAddresses, RedisKeys, type BudgetRule, type ProjectPolicy, type RedisClient } from '@gateway/shared';
import { startRedisCluster, type RedisClusterHandle } from '../../../test-support/redis-cluster.js';
import { BudgetLeases, type BudgetHold } from './budget-leases.js';
import { ProjectPolicies } from './project-policies.js';

/**
 * Budgets on a six-node Redis Cluster: the ledger script runs under the project's hash tag, and a
 * project's policy and budgets are read together in one MGET.
 */
let cluster: RedisClusterHandle;
let redis: RedisClient;
const keys = new RedisKeys('cluster-budgets:');

beforeAll(async () => {
  cluster = await startRedisCluster();
  redis = await connectRedis({ kind: 'cluster', nodes: parseAddresses('REDIS_CLUSTER_NODES', cluster.seeds), tls: false }, { maxRetriesPerRequest: 1 });
}, 120_000);

afterAll(async () => {
  await redis?.quit().catch(() => {});
  await cluster?.close();
});

describe('budgets on a Redis Cluster', () => {
  it('leases, refuses past the limit and settles', async () => {
    await redis.set(keys.budgetLedgersReady, '1');
    const leases = new BudgetLeases(redis, keys, randomUUID(), { blockNanos: 1_000, idleMs: 3_600_000, flushMs: 3_600_000, leaseTtlMs: 30_000, outageFraction: 0 });
    const projectId = randomUUID();
    const rule: BudgetRule = { id: randomUUID(), scope: 'project', key_id: null, tag: null, limit_usd: 10_000 / 1e9, period: 'day', timezone: 'Europe/Paris', alert_at: [], created_at: Date.now() };
    try {
      const held = (await leases.reserve(projectId, [rule], 6_000, Date.now())) as BudgetHold;
      expect(held).not.toBeInstanceOf(GatewayError);
      expect(await leases.reserve(projectId, [rule], 6_000, Date.now())).toBeInstanceOf(GatewayError);
      leases.settle(held, 2_500);
      await leases.flush();
      const ledger = keys.budgetLedger(projectId, rule.id, budgetWindow(rule, Date.now()).id);
      expect(await redis.hget(ledger, 'spent')).toBe('2500');
      // 10,000 − 2,500 spent: a 7,000 request fits once the unused reservation is back.
      expect(await leases.reserve(projectId, [rule], 7_000, Date.now())).not.toBeInstanceOf(GatewayError);
    } finally {
      await leases.close();
    }
  });

  it("reads a project's policy and budgets in one MGET", async () => {
    const projectId = randomUUID();
    await redis.set(keys.projectPolicy(projectId), JSON.stringify({ v: 1, id: projectId, quota_tokens: null, quota_period: 'total', rate_limits: {}, allowed_models: null, max_tokens_cap: null }));
    await redis.set(keys.projectBudgets(projectId), JSON.stringify({ v: 1, project_id: projectId, budgets: [{ id: 'b1', scope: 'project', limit_usd: 1, period: 'day', timezone: 'UTC', alert_at: [], created_at: 0 }] }));
    const policy = (await new ProjectPolicies(redis, keys).get(projectId)) as ProjectPolicy;
    expect(policy.budgets?.map((b) => b.id)).toEqual(['b1']);
  });
});
