import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError, NO_RATE_LIMITS, RedisKeys, type ProjectPolicy } from '@gateway/shared';
import { testRedisPrefix } from '../../../test-support/databases.js';
import { clearPrefix, testRedis } from '../../../test-support/redis.js';
import { QuotaLeases, type Reservation } from './quota-leases.js';

/**
 * Lease accounting against the real Redis, with writes to Redis only when the test says so
 * (flushes every hour), so what a proxy admits cannot depend on when it last wrote.
 */
let redis: Redis;
let keys: RedisKeys;
const prefix = testRedisPrefix('quota-leases');
const opened: QuotaLeases[] = [];

beforeAll(() => {
  redis = testRedis();
  keys = new RedisKeys(prefix);
});

afterAll(async () => {
  for (const q of opened) await q.close();
  await clearPrefix(redis, prefix);
  await redis.quit();
});

function leases(blockTokens = 20_000): QuotaLeases {
  const q = new QuotaLeases(redis, keys, randomUUID(), { blockTokens, idleMs: 3_600_000, flushMs: 3_600_000, aliveTtlMs: 15_000 });
  opened.push(q);
  return q;
}

function policy(quota: number): ProjectPolicy {
  return { v: 1, id: randomUUID(), quota_tokens: quota, quota_period: 'total', rate_limits: NO_RATE_LIMITS, allowed_models: null, max_tokens_cap: null };
}

async function reserve(q: QuotaLeases, p: ProjectPolicy, estimate: number): Promise<Reservation | GatewayError> {
  return await q.reserve(p, estimate, Date.now());
}

async function ledger(p: ProjectPolicy): Promise<{ charged: number; leased: number }> {
  const fields = await redis.hgetall(keys.quotaLedger(p.id, 'total'));
  let leased = 0;
  for (const [k, v] of Object.entries(fields)) if (k.startsWith('lease:')) leased += Number(v);
  return { charged: Number(fields.charged ?? 0), leased };
}

describe('QuotaLeases', () => {
  it('admits requests one after another until the next reservation no longer fits, with nothing written in between', async () => {
    const q = leases();
    const p = policy(25_000);
    const estimate = 1_846;
    const actual = 664;
    let used = 0;
    for (;;) {
      const r = await reserve(q, p, estimate);
      if (r instanceof GatewayError) {
        expect(r.code).toBe('QUOTA_EXCEEDED');
        expect(used + estimate).toBeGreaterThan(25_000);
        expect(r.message).toBe(`This request may need 1,846 tokens; the project has ${(25_000 - used).toLocaleString('en-US')} left of its 25,000-token quota. Lower max_tokens or raise the quota.`);
        break;
      }
      expect(used + estimate).toBeLessThanOrEqual(25_000);
      q.settle(r, actual);
      used += actual;
    }
    // 35 requests fit; the 36th (23,240 used + 1,846) would not.
    expect(used).toBe(35 * actual);
    // Redis never granted more than the quota.
    const state = await ledger(p);
    expect(state.charged + state.leased).toBeLessThanOrEqual(25_000);
  });

  it("a monthly quota's ledger changes with the month, for the same policy asked before and after", async () => {
    const q = leases();
    const p: ProjectPolicy = { ...policy(10_000), quota_period: 'month' };
    const lastOfJanuary = Date.UTC(2031, 0, 31, 23, 59, 59, 999);
    const january = await q.reserve(p, 100, lastOfJanuary);
    const february = await q.reserve(p, 200, lastOfJanuary + 1);
    const januaryAgain = await q.reserve(p, 300, lastOfJanuary - 60_000);
    for (const r of [january, february, januaryAgain]) if (r instanceof GatewayError) expect.fail(r.message);
    const [a, b, c] = [january, february, januaryAgain] as [Reservation, Reservation, Reservation];
    expect(a.ledger).not.toBeNull();
    expect(b.ledger).not.toBe(a.ledger);
    expect(c.ledger).toBe(a.ledger);
    expect(await redis.exists(keys.quotaLedger(p.id, 'm203101'), keys.quotaLedger(p.id, 'm203102'))).toBe(2);
    for (const r of [a, b, c]) q.settle(r, 0);
  });

  it('writes the true counts to `charged` and hands every leased token back on close', async () => {
    const q = leases();
    const p = policy(10_000);
    const a = (await reserve(q, p, 300)) as Reservation;
    const b = (await reserve(q, p, 300)) as Reservation;
    q.settle(a, 120);
    // More than it reserved (a request without max_tokens): the lease pays the difference.
    q.settle(b, 450);
    await q.close();
    expect(await ledger(p)).toEqual({ charged: 570, leased: 0 });
    opened.splice(opened.indexOf(q), 1);
  });

  it('takes a request that used more than it reserved out of what is left', async () => {
    const q = leases(100);
    const p = policy(1_000);
    const a = (await reserve(q, p, 100)) as Reservation;
    q.settle(a, 700);
    expect(await reserve(q, p, 301)).toBeInstanceOf(GatewayError);
    const r = await reserve(q, p, 300);
    expect(r).not.toBeInstanceOf(GatewayError);
  });

  it('never lets two proxies lease more than the quota between them', async () => {
    const one = leases(50);
    const two = leases(50);
    const p = policy(1_000);
    const held: Reservation[] = [];
    for (let i = 0; i < 40; i++) {
      const r = await reserve(i % 2 === 0 ? one : two, p, 37);
      if (!(r instanceof GatewayError)) held.push(r);
    }
    expect(held.reduce((sum, r) => sum + r.amount, 0)).toBeLessThanOrEqual(1_000);
    const state = await ledger(p);
    expect(state.charged + state.leased).toBeLessThanOrEqual(1_000);
    expect(held.length).toBeGreaterThanOrEqual(Math.floor((1_000 - 2 * 50) / 37));
  });

  it("sizes a lease by the proxy's own traffic, so quiet workers do not lock up a small quota", async () => {
    const p = policy(2_000);
    const estimate = 20;
    // Sixteen workers each serve one request and keep what they leased.
    for (let i = 0; i < 16; i++) {
      const quiet = leases();
      const r = (await reserve(quiet, p, estimate)) as Reservation;
      expect(r).not.toBeInstanceOf(GatewayError);
      quiet.settle(r, estimate);
    }
    // Each quiet one holds about one request's worth, not a sixteenth of the quota.
    const before = await ledger(p);
    expect(before.leased).toBeLessThanOrEqual(16 * 2 * estimate);
    // A busy worker is admitted for all the rest, bar what the quiet ones still hold.
    const busy = leases();
    let admitted = 0;
    for (;;) {
      const r = await reserve(busy, p, estimate);
      if (r instanceof GatewayError) break;
      busy.settle(r, estimate);
      admitted++;
    }
    expect(admitted * estimate).toBeGreaterThanOrEqual(2_000 - before.leased - before.charged - estimate);
    const after = await ledger(p);
    expect(after.charged + after.leased).toBeLessThanOrEqual(2_000);
  });

  it('says the quota is used up when it is', async () => {
    const q = leases();
    const p = policy(500);
    const r = (await reserve(q, p, 500)) as Reservation;
    q.settle(r, 500);
    const refused = await reserve(q, p, 1);
    expect(refused).toBeInstanceOf(GatewayError);
    expect((refused as GatewayError).message).toBe('The project has used its token quota.');
  });
});
