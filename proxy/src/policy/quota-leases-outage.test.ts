import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, GatewayError, NO_RATE_LIMITS, RedisKeys, type ProjectPolicy } from '@gateway/shared';
import { eventually } from '../../../test-support/processes.js';
import { startPrivateRedis, type PrivateRedis } from '../../../test-support/services.js';
import { QuotaLeases, type Reservation } from './quota-leases.js';

/**
 * Quota leases through a Redis outage, on a private Redis killed and restarted empty: the proxy
 * keeps spending the lease it holds, refuses (503) only once it is spent, and after Redis comes back
 * without its lease does not write the ledger into a state that hands out tokens nobody holds.
 */
let server: PrivateRedis;
let redis: Redis;
const keys = new RedisKeys('outage-leases:');

beforeAll(async () => {
  server = await startPrivateRedis();
  // The proxy's lookup connection settings: fail fast while Redis is away.
  redis = await connectRedis(server.url, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  redis.on('error', () => {});
});

afterAll(async () => {
  redis?.disconnect();
  await server?.stop('SIGKILL');
});

function policy(quota: number): ProjectPolicy {
  return { v: 1, id: randomUUID(), quota_tokens: quota, quota_period: 'total', rate_limits: NO_RATE_LIMITS, allowed_models: null, max_tokens_cap: null };
}

describe('QuotaLeases while Redis is away', () => {
  it('spends the lease it holds, refuses once it is spent, and rebuilds a lost lease field from what is in use', async () => {
    const q = new QuotaLeases(redis, keys, randomUUID(), { blockTokens: 1_000, idleMs: 3_600_000, flushMs: 20, aliveTtlMs: 15_000 });
    q.start();
    try {
      const p = policy(100_000);
      const first = (await q.reserve(p, 100, Date.now())) as Reservation;
      expect(first).not.toBeInstanceOf(GatewayError);
      q.settle(first, 100);
      await eventually(async () => (await redis.hget(keys.quotaLedger(p.id, 'total'), 'charged')) === '100', 'the first request charged');

      await server.stop('SIGKILL');
      await eventually(() => redis.status !== 'ready', 'the connection lost');
      // The block leased before the outage (1,100 tokens, 100 used) is spent without Redis...
      const held: Reservation[] = [];
      for (let i = 0; i < 10; i++) {
        const r = await q.reserve(p, 100, Date.now());
        expect(r).not.toBeInstanceOf(GatewayError);
        held.push(r as Reservation);
      }
      // ...and once it is, the request is refused as retryable, not as over quota.
      const refused = await q.reserve(p, 100, Date.now());
      expect(refused).toBeInstanceOf(GatewayError);
      expect((refused as GatewayError).code).toBe('UNAVAILABLE');
      for (const r of held.slice(0, 4)) q.settle(r, 50);

      // Back, empty: the ledger (and this proxy's lease in it) is gone.
      await server.start();
      const ledgerKey = keys.quotaLedger(p.id, 'total');
      const field = Object.keys(await eventually(async () => {
        const fields = redis.status === 'ready' ? await redis.hgetall(ledgerKey) : {};
        return Object.keys(fields).some((f) => f.startsWith('lease:')) && fields.charged !== undefined ? fields : null;
      }, 'the ledger written again')).find((f) => f.startsWith('lease:'))!;
      // Six reservations of 100 are still in flight; the 4 × 50 settled moved to `charged`.
      const fields = await redis.hgetall(ledgerKey);
      expect(Number(fields[field])).toBe(600);
      expect(Number(fields.charged)).toBe(200);
      for (const r of held.slice(4)) q.settle(r, 100);
      await eventually(async () => Number(await redis.hget(ledgerKey, field)) === 0, 'the in-flight tokens charged');
      expect(Number(await redis.hget(ledgerKey, 'charged'))).toBe(800);
    } finally {
      await q.close();
    }
  });

  it('with an outage allowance, admits that share of the quota beyond the lease, then refuses 503', async () => {
    await eventually(() => redis.status === 'ready', 'connected');
    const q = new QuotaLeases(redis, keys, randomUUID(), { blockTokens: 1_000, idleMs: 3_600_000, flushMs: 20, aliveTtlMs: 15_000, outageFraction: 0.02 });
    q.start();
    try {
      const p = policy(100_000);
      const first = (await q.reserve(p, 100, Date.now())) as Reservation;
      q.settle(first, 100);
      await eventually(async () => (await redis.hget(keys.quotaLedger(p.id, 'total'), 'charged')) === '100', 'the first request charged');
      await server.stop('SIGKILL');
      await eventually(() => redis.status !== 'ready', 'the connection lost');
      let admitted = 0;
      for (;;) {
        const r = await q.reserve(p, 100, Date.now());
        if (r instanceof GatewayError) {
          expect(r.code).toBe('UNAVAILABLE');
          break;
        }
        admitted += 100;
      }
      // The lease's 1,000 left plus 2 % of 100,000.
      expect(admitted).toBe(1_000 + 2_000);
    } finally {
      await server.start();
      await q.close();
    }
  });
});
