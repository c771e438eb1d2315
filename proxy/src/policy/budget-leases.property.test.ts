import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError, RedisKeys, type BudgetRule } from '@gateway/shared';
import { testRedisPrefix } from '../../../test-support/databases.js';
import { clearPrefix, testRedis } from '../../../test-support/redis.js';
import { eventually } from '../../../test-support/processes.js';
import { budgetLedgerCommand } from './budget-ledger-script.js';
import { BudgetLeases, type BudgetHold } from './budget-leases.js';

/**
 * Never overshoot (DESIGN §7): random concurrent admissions, settlements, flushes, proxy deaths
 * (a proxy that stops without a word: its lease lapses by TTL) and waits, by several proxies
 * against the real Redis script, and after every step spend ≤ limit, and spend plus the live
 * leases ≤ limit. Every settlement is made twice; the second must change nothing.
 *
 * A living proxy runs its timer, as in production, so its leases are renewed while it holds
 * requests: a lease lapses only with its proxy. (One cut off from Redis for longer than the TTL
 * with requests in flight is the outage case, whose bound docs/budgets.md states and
 * budget-leases-outage.test.ts checks.)
 */
let redis: Redis;
let keys: RedisKeys;
const prefix = testRedisPrefix('budget-property');
const opened: BudgetLeases[] = [];
const TTL_MS = 400;
const LIMIT = 1_000_000; // nano-dollars

beforeAll(async () => {
  redis = testRedis();
  keys = new RedisKeys(prefix);
  await redis.set(keys.budgetLedgersReady, '1');
});

afterAll(async () => {
  for (const leases of opened) await leases.close().catch(() => {});
  await clearPrefix(redis, prefix);
  await redis.quit();
});

function proxy(): BudgetLeases {
  const leases = new BudgetLeases(redis, keys, randomUUID(), { blockNanos: LIMIT / 10, idleMs: 50, flushMs: TTL_MS / 8, leaseTtlMs: TTL_MS, outageFraction: 0 });
  leases.start();
  opened.push(leases);
  return leases;
}

function rule(limit = LIMIT): BudgetRule {
  return { id: randomUUID(), scope: 'project', key_id: null, tag: null, limit_usd: limit / 1e9, period: 'total', timezone: 'UTC', alert_at: [], created_at: Date.now() };
}

/** spent, and the leases Redis still counts (by Redis's clock). */
async function ledger(projectId: string, budget: BudgetRule): Promise<{ spent: number; leased: number }> {
  const fields = await redis.hgetall(keys.budgetLedger(projectId, budget.id, 'total'));
  const [seconds, micros] = await redis.time();
  const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  let leased = 0;
  for (const [field, value] of Object.entries(fields)) {
    if (field.startsWith('lease:') && Number(fields[`exp:${field.slice(6)}`] ?? 0) > now) leased += Number(value);
  }
  return { spent: Number(fields.spent ?? 0), leased };
}

type Action =
  | { kind: 'admit'; proxy: number; amount: number }
  | { kind: 'settle'; proxy: number; pick: number; fraction: number }
  | { kind: 'flush'; proxy: number }
  | { kind: 'die'; proxy: number }
  | { kind: 'wait'; ms: number };

const PROXIES = 4;
const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('admit' as const), proxy: fc.nat(PROXIES - 1), amount: fc.integer({ min: 1, max: LIMIT / 4 }) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('settle' as const), proxy: fc.nat(PROXIES - 1), pick: fc.nat(), fraction: fc.double({ min: 0, max: 1, noNaN: true }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('flush' as const), proxy: fc.nat(PROXIES - 1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('die' as const), proxy: fc.nat(PROXIES - 1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: TTL_MS * 2 }) }) },
);

describe('budget ledger: spend never exceeds the limit', () => {
  it('holds for any interleaving of admissions, settlements and proxy deaths across proxies', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(action, { minLength: 1, maxLength: 6 }), { minLength: 3, maxLength: 12 }), async (batches) => {
        const projectId = randomUUID();
        const budget = rule();
        const rules = [budget];
        const proxies = Array.from({ length: PROXIES }, () => ({ leases: proxy(), holds: [] as { hold: BudgetHold; amount: number }[], alive: true }));
        let admitted = 0;
        // What the settlements said, on proxies that lived to the end and in all: a proxy that dies
        // loses only the costs it had not written yet, and nothing is ever counted twice.
        let settledByLiving = 0;
        let settledInAll = 0;
        const settledBy = new Map<BudgetLeases, number>();
        for (const batch of batches) {
          // Each batch runs concurrently: admissions may wait on a lease while others settle.
          await Promise.all(
            batch.map(async (a) => {
              if (a.kind === 'wait') return sleep(a.ms);
              const p = proxies[a.proxy]!;
              if (!p.alive) {
                // A dead proxy is replaced by a new one (a restart under a new id).
                proxies[a.proxy] = { leases: proxy(), holds: [], alive: true };
                return;
              }
              if (a.kind === 'admit') {
                const held = await p.leases.reserve(projectId, rules, a.amount, Date.now());
                if (held instanceof GatewayError) {
                  expect(held.code).toBe('BUDGET_EXCEEDED');
                  expect(held.message).toContain(budget.id);
                  return;
                }
                admitted++;
                p.holds.push({ hold: held, amount: a.amount });
              } else if (a.kind === 'settle') {
                if (p.holds.length === 0) return;
                const [{ hold, amount }] = p.holds.splice(a.pick % p.holds.length, 1) as [{ hold: BudgetHold; amount: number }];
                const cost = Math.floor(amount * a.fraction);
                p.leases.settle(hold, cost);
                settledBy.set(p.leases, (settledBy.get(p.leases) ?? 0) + cost);
                settledInAll += cost;
                // Settled again (a retried closing step): nothing may change.
                p.leases.settle(hold, amount);
              } else if (a.kind === 'flush') {
                await p.leases.flush();
              } else {
                p.alive = false;
                p.leases.stop();
              }
            }),
          );
          const { spent, leased } = await ledger(projectId, budget);
          expect(spent).toBeLessThanOrEqual(budget.limit_usd * 1e9);
          expect(spent + leased).toBeLessThanOrEqual(budget.limit_usd * 1e9);
        }
        // Everything still held by the living is settled in full and written: still within the limit.
        for (const p of proxies) {
          if (!p.alive) continue;
          for (const { hold, amount } of p.holds.splice(0)) {
            p.leases.settle(hold, amount);
            settledBy.set(p.leases, (settledBy.get(p.leases) ?? 0) + amount);
            settledInAll += amount;
          }
          await p.leases.flush();
          settledByLiving += settledBy.get(p.leases) ?? 0;
        }
        const { spent } = await ledger(projectId, budget);
        expect(spent).toBeLessThanOrEqual(budget.limit_usd * 1e9);
        // Every settlement reached the ledger, however long the proxy sat idle in between (its
        // lease handed back and taken again) — except what a dead proxy had not written.
        expect(spent).toBeGreaterThanOrEqual(settledByLiving);
        expect(spent).toBeLessThanOrEqual(settledInAll);
        return admitted >= 0;
      }),
      { numRuns: 30 },
    );
  }, 240_000);

  it('charges requests spaced wider than the idle hand-back, each one', async () => {
    const projectId = randomUUID();
    const budget = rule();
    const leases = proxy();
    const costs = [1_000, 2_000, 3_000, 4_000];
    for (const cost of costs) {
      const held = (await leases.reserve(projectId, [budget], 10_000, Date.now())) as BudgetHold;
      expect(held).not.toBeInstanceOf(GatewayError);
      leases.settle(held, cost);
      await leases.flush();
      // Idle: the lease goes back and this proxy forgets the ledger before the next request.
      await eventually(async () => (leases.size === 0 ? true : null), 'the idle ledger forgotten');
      expect((await ledger(projectId, budget)).leased).toBe(0);
    }
    expect((await ledger(projectId, budget)).spent).toBe(costs.reduce((a, b) => a + b));
  });

  it('a dead proxy\'s lease is reclaimed once its TTL passes', async () => {
    const projectId = randomUUID();
    const budget = rule();
    const dying = proxy();
    const held = await dying.reserve(projectId, [budget], LIMIT, Date.now());
    expect(held).not.toBeInstanceOf(GatewayError);
    dying.stop();
    const other = proxy();
    expect(await other.reserve(projectId, [budget], 1, Date.now())).toBeInstanceOf(GatewayError);
    await sleep(TTL_MS + 50);
    const after = await other.reserve(projectId, [budget], LIMIT, Date.now());
    expect(after).not.toBeInstanceOf(GatewayError);
  });

  it('starts a new ledger when the period rolls over', async () => {
    const projectId = randomUUID();
    // A one-minute window that ends in a moment.
    const budget = { ...rule(), period: '1m', created_at: Date.now() - 60_000 + 300 };
    const leases = proxy();
    expect(await leases.reserve(projectId, [budget], LIMIT, Date.now())).not.toBeInstanceOf(GatewayError);
    expect(await leases.reserve(projectId, [budget], 1, Date.now())).toBeInstanceOf(GatewayError);
    const next = await eventually(async () => {
      const r = await leases.reserve(projectId, [budget], LIMIT, Date.now());
      return r instanceof GatewayError ? null : r;
    }, 'the next window admits again');
    expect(next.parts).toHaveLength(1);
    const ledgers = await redis.keys(`${keys.budgetLedger(projectId, budget.id, '')}*`);
    expect(ledgers).toHaveLength(2);
  });

  it('reserves in every budget that applies or in none', async () => {
    const projectId = randomUUID();
    const roomy = rule(LIMIT);
    const tight = rule(LIMIT / 10);
    const leases = proxy();
    const refused = await leases.reserve(projectId, [roomy, tight], LIMIT / 5, Date.now());
    expect(refused).toBeInstanceOf(GatewayError);
    expect((refused as GatewayError).message).toContain(tight.id);
    // Nothing of the refused request stayed reserved in the roomy budget: all of it is still admissible.
    const whole = await leases.reserve(projectId, [roomy], LIMIT - LIMIT / 10, Date.now());
    expect(whole).not.toBeInstanceOf(GatewayError);
  });

  it('settles a request once: a second settlement of it changes nothing', async () => {
    const projectId = randomUUID();
    const budget = rule();
    const leases = proxy();
    const held = (await leases.reserve(projectId, [budget], 5_000, Date.now())) as BudgetHold;
    leases.settle(held, 1_200);
    leases.settle(held, 4_000);
    await leases.flush();
    expect((await ledger(projectId, budget)).spent).toBe(1_200);
  });

  it('applies one settlement once, however often the script is sent it', async () => {
    const command = budgetLedgerCommand(redis);
    const key = keys.budgetLedger(randomUUID(), randomUUID(), 'total');
    const base = { key, limit: 1000, proxyId: 'p1', ttlMs: 10_000, expireAt: 0, mayStart: true };
    expect(await command({ ...base, want: 600, seq: 0, charge: 0, release: 0 })).toEqual([1, 600, 0, 600]);
    const settle = { ...base, want: 0, seq: 1, charge: 250, release: 50 };
    expect(await command(settle)).toEqual([1, 0, 250, 300]);
    expect(await command(settle)).toEqual([1, 0, 250, 300]);
    expect(await redis.hget(key, 'spent')).toBe('250');
    // A second proxy gets only what is left: 1000 - 250 spent - 300 leased.
    expect((await command({ ...base, proxyId: 'p2', want: 1000, seq: 0, charge: 0, release: 0 }))[1]).toBe(450);
    // A ledger Redis lost is not started at 0 unless the control plane has loaded this Redis.
    const lost = keys.budgetLedger(randomUUID(), randomUUID(), 'total');
    expect(await command({ ...base, key: lost, mayStart: false, want: 10, seq: 0, charge: 0, release: 0 })).toEqual([0, 0, 0, 0]);
    expect(await redis.exists(lost)).toBe(0);
  });
});
