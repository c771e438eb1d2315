import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, GatewayError, RedisKeys, type BudgetRule } from '@gateway/shared';
import { eventually } from '../../../test-support/processes.js';
import { startPrivateRedis, type PrivateRedis } from '../../../test-support/services.js';
import { BudgetLeases, type BudgetHold } from './budget-leases.js';

/**
 * Budget leases through a Redis outage, on a private Redis killed and restarted empty: the proxy
 * spends the lease it holds, then an allowance of OUTAGE_ALLOWANCE_PERCENT of the limit, then
 * refuses 503; back on an empty Redis it starts no ledger at 0 until the control plane has loaded
 * them (the marker), and then carries on from the spend loaded.
 */
let server: PrivateRedis;
let redis: Redis;
const keys = new RedisKeys('outage-budgets:');
const LIMIT = 1_000_000;

beforeAll(async () => {
  server = await startPrivateRedis();
  redis = await connectRedis(server.url, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  redis.on('error', () => {});
});

afterAll(async () => {
  redis?.disconnect();
  await server?.stop('SIGKILL');
});

describe('BudgetLeases while Redis is away', () => {
  it('serves from the lease, then from the bounded allowance, then 503; reloaded spend is kept', async () => {
    await redis.set(keys.budgetLedgersReady, '1');
    const leases = new BudgetLeases(redis, keys, randomUUID(), { blockNanos: 20_000, idleMs: 3_600_000, flushMs: 20, leaseTtlMs: 30_000, outageFraction: 0.1 });
    leases.start();
    const projectId = randomUUID();
    const rule: BudgetRule = { id: randomUUID(), scope: 'project', key_id: null, tag: null, limit_usd: LIMIT / 1e9, period: 'total', timezone: 'UTC', alert_at: [], created_at: Date.now() };
    const ledgerKey = keys.budgetLedger(projectId, rule.id, 'total');
    try {
      const first = (await leases.reserve(projectId, [rule], 5_000, Date.now())) as BudgetHold;
      expect(first).not.toBeInstanceOf(GatewayError);
      leases.settle(first, 5_000);
      await eventually(async () => (await redis.hget(ledgerKey, 'spent')) === '5000', 'the first request settled');
      const leased = Number(Object.entries(await redis.hgetall(ledgerKey)).find(([f]) => f.startsWith('lease:'))![1]);

      await server.stop('SIGKILL');
      await eventually(() => redis.status !== 'ready', 'the connection lost');
      let admitted = 0;
      const held: BudgetHold[] = [];
      for (;;) {
        const r = await leases.reserve(projectId, [rule], 10_000, Date.now());
        if (r instanceof GatewayError) {
          expect(r.code).toBe('UNAVAILABLE');
          break;
        }
        held.push(r);
        admitted += 10_000;
      }
      // What it held, plus at most a tenth of the limit: the documented bound.
      expect(admitted).toBeGreaterThan(0);
      expect(admitted).toBeLessThanOrEqual(leased + LIMIT * 0.1);
      expect(admitted).toBeGreaterThanOrEqual(LIMIT * 0.1);
      for (const r of held) leases.settle(r, 10_000);

      // Back, empty, the budgets not loaded yet: no ledger is started at 0.
      await server.start();
      await eventually(() => redis.status === 'ready', 'reconnected');
      const waiting = await leases.reserve(projectId, [rule], 10_000, Date.now());
      expect(waiting).toBeInstanceOf(GatewayError);
      expect(await redis.hexists(ledgerKey, 'spent')).toBe(0);

      // The control plane loads the spend of the usage records and says so.
      await redis.hset(ledgerKey, 'spent', 400_000);
      await redis.set(keys.budgetLedgersReady, '1');
      const after = await eventually(async () => {
        const r = await leases.reserve(projectId, [rule], 10_000, Date.now());
        return r instanceof GatewayError ? null : r;
      }, 'served again once the ledger is loaded');
      leases.settle(after, 10_000);
      await eventually(async () => (await redis.hget(ledgerKey, 'spent')) === '410000', 'settled on top of the loaded spend');
    } finally {
      await leases.close();
    }
  }, 60_000);
});
