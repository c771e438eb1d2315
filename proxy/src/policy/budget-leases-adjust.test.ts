import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, GatewayError, RedisKeys, type BudgetRule } from '@gateway/shared';
import { TEST_REDIS_URL } from '../../../test-support/databases.js';
import { eventually } from '../../../test-support/processes.js';
import { BudgetLeases, type BudgetHold } from './budget-leases.js';

/**
 * Two things provider-run batches rely on, on the real Redis: requests racing for the same lease
 * are all admitted while the limit has room (the one that finds the lease spent leases again), and
 * `adjust` charges and gives back spend in the window of the moment given, with no hold.
 */
let redis: Redis;
const keys = new RedisKeys(`budget-adjust-${randomUUID()}:`);

beforeAll(async () => {
  redis = await connectRedis(TEST_REDIS_URL);
  await redis.set(keys.budgetLedgersReady, '1');
});

afterAll(async () => {
  const found = await redis.keys(`${keys.prefix}*`);
  if (found.length > 0) await redis.del(...found);
  redis?.disconnect();
});

function rule(limitNanos: number, period: BudgetRule['period'] = 'total'): BudgetRule {
  return { id: randomUUID(), scope: 'project', key_id: null, tag: null, limit_usd: limitNanos / 1e9, period, timezone: 'UTC', alert_at: [], created_at: Date.now() };
}

function leases(): BudgetLeases {
  const made = new BudgetLeases(redis, keys, randomUUID(), { blockNanos: 1_000, idleMs: 3_600_000, flushMs: 20, leaseTtlMs: 30_000, outageFraction: 0.1 });
  made.start();
  return made;
}

describe('BudgetLeases', () => {
  it('admits requests that raced for one lease while the limit has room for all of them, and refuses the one beyond', async () => {
    const budget = leases();
    const projectId = randomUUID();
    const limit = rule(100_000);
    try {
      // Each needs far more than a lease block: all four wait on the first lease, which covers one.
      const held = await Promise.all(Array.from({ length: 4 }, () => budget.reserve(projectId, [limit], 25_000, Date.now())));
      expect(held.every((h) => !(h instanceof GatewayError))).toBe(true);
      const beyond = await budget.reserve(projectId, [limit], 25_000, Date.now());
      expect(beyond).toBeInstanceOf(GatewayError);
      expect((beyond as GatewayError).code).toBe('BUDGET_EXCEEDED');
      for (const h of held) budget.settle(h as BudgetHold, 25_000);
    } finally {
      await budget.close();
    }
  });

  it('charges and gives back with adjust, in Redis and in what may still be reserved', async () => {
    const budget = leases();
    const projectId = randomUUID();
    const limit = rule(100_000);
    const ledgerKey = keys.budgetLedger(projectId, limit.id, 'total');
    try {
      const first = (await budget.reserve(projectId, [limit], 60_000, Date.now())) as BudgetHold;
      expect(first).not.toBeInstanceOf(GatewayError);
      budget.settle(first, 0);
      // Charged as spent with no hold: 60,000 of 100,000 gone, so 50,000 more does not fit.
      budget.adjust(projectId, [limit], Date.now(), 60_000);
      await eventually(async () => (await redis.hget(ledgerKey, 'spent')) === '60000', 'the charge written');
      expect(await budget.reserve(projectId, [limit], 50_000, Date.now())).toBeInstanceOf(GatewayError);
      // Most of it given back (the work cost 5,000): now it fits.
      budget.adjust(projectId, [limit], Date.now(), -55_000);
      await eventually(async () => (await redis.hget(ledgerKey, 'spent')) === '5000', 'the give-back written');
      const after = await budget.reserve(projectId, [limit], 50_000, Date.now());
      expect(after).not.toBeInstanceOf(GatewayError);
      budget.settle(after as BudgetHold, 0);
    } finally {
      await budget.close();
    }
  });

  it("adjusts the window of the moment given, not the current one", async () => {
    const budget = leases();
    const projectId = randomUUID();
    const daily = { ...rule(1_000_000, 'day'), created_at: Date.now() - 3 * 86_400_000 };
    const yesterday = Date.now() - 86_400_000;
    try {
      const now = (await budget.reserve(projectId, [daily], 1_000, Date.now())) as BudgetHold;
      budget.settle(now, 1_000);
      budget.adjust(projectId, [daily], yesterday, 7_000);
      await budget.flush();
      const ledgers = await redis.keys(`${keys.prefix}*${daily.id}*`);
      const spent = await Promise.all(ledgers.map(async (key) => Number(await redis.hget(key, 'spent'))));
      expect(spent.sort((a, b) => a - b)).toEqual([1_000, 7_000]);
    } finally {
      await budget.close();
    }
  });
});
